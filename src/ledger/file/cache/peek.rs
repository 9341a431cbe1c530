//! The fields of a line the index needs, read without building the whole
//! record (`Peek`). Most lines are read by `flat`, a scanner for the one
//! shape `discuss` writes; any other line is read by serde, whose answer
//! `flat` gives exactly whenever it gives one.

use crate::record::scan::{Scan, once};
use serde::Deserialize;
use std::borrow::Cow;

/// The fields of a line the index needs; the payload is skipped, not
/// copied.
#[derive(Deserialize, Debug, PartialEq)]
pub(super) struct Peek<'a> {
    pub(super) v: u64,
    #[serde(borrow)]
    pub(super) kind: Cow<'a, str>,
    pub(super) at_ms: i64,
    #[serde(default, borrow)]
    pub(super) correlation_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) discussion_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) receipt: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) agent_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) id: Cow<'a, str>,
    #[serde(default)]
    pub(super) op_lines: Option<u64>,
    #[serde(default, borrow)]
    pub(super) op_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) idempotency_key: Option<Cow<'a, str>>,
    /// Only whether it is there: a key counts only with its digest.
    #[serde(default, borrow)]
    pub(super) request_digest: Option<Cow<'a, str>>,
}

/// The line's `Peek`, or `None` when it is not a JSON object with the
/// fields `Peek` needs (what serde says of it).
pub(super) fn peek(line: &[u8]) -> Option<Peek<'_>> {
    flat(line).or_else(|| serde_json::from_slice(line).ok())
}

/// `peek` of a line the way `discuss` writes one: a JSON object without
/// whitespace whose values are strings, integers, `true`, `false` or
/// `null`, the keys and the strings `Peek` keeps without escapes. `None`
/// for any other line, even a valid one; for a line it
/// reads, exactly what serde reads (`peek_as_serde` checks it, and the
/// fuzz target runs that check on every line).
fn flat(line: &[u8]) -> Option<Peek<'_>> {
    let mut scan = Scan::object_read_in_part(line)?;
    let mut fields = Fields::default();
    loop {
        let key = scan.key()?;
        match key {
            b"v" => once(&mut fields.v, scan.unsigned()?)?,
            b"kind" => once(&mut fields.kind, scan.plain_string()?)?,
            b"at_ms" => once(&mut fields.at_ms, scan.signed()?)?,
            b"id" => once(&mut fields.id, scan.plain_string()?)?,
            b"correlation_id" => once(
                &mut fields.correlation_id,
                scan.nullable(Scan::plain_string)?,
            )?,
            b"discussion_id" => once(
                &mut fields.discussion_id,
                scan.nullable(Scan::plain_string)?,
            )?,
            b"receipt" => once(&mut fields.receipt, scan.nullable(Scan::plain_string)?)?,
            b"agent_id" => once(&mut fields.agent_id, scan.nullable(Scan::plain_string)?)?,
            b"op_id" => once(&mut fields.op_id, scan.nullable(Scan::plain_string)?)?,
            b"idempotency_key" => once(
                &mut fields.idempotency_key,
                scan.nullable(Scan::plain_string)?,
            )?,
            b"request_digest" => once(
                &mut fields.request_digest,
                scan.nullable(Scan::plain_string)?,
            )?,
            b"op_lines" => once(&mut fields.op_lines, scan.nullable(Scan::unsigned)?)?,
            _ => scan.skip_value_of(key)?,
        }
        if scan.object_ends()? {
            break;
        }
    }
    Some(Peek {
        v: fields.v?,
        kind: Cow::Borrowed(fields.kind?),
        at_ms: fields.at_ms?,
        correlation_id: borrowed(fields.correlation_id),
        discussion_id: borrowed(fields.discussion_id),
        receipt: borrowed(fields.receipt),
        agent_id: borrowed(fields.agent_id),
        id: Cow::Borrowed(fields.id?),
        op_lines: fields.op_lines.flatten(),
        op_id: borrowed(fields.op_id),
        idempotency_key: borrowed(fields.idempotency_key),
        request_digest: borrowed(fields.request_digest),
    })
}

/// The fields seen so far: `Some` once a field is there (serde refuses a
/// field twice, even `null` twice).
#[derive(Default)]
struct Fields<'a> {
    v: Option<u64>,
    kind: Option<&'a str>,
    at_ms: Option<i64>,
    id: Option<&'a str>,
    correlation_id: Option<Option<&'a str>>,
    discussion_id: Option<Option<&'a str>>,
    receipt: Option<Option<&'a str>>,
    agent_id: Option<Option<&'a str>>,
    op_lines: Option<Option<u64>>,
    op_id: Option<Option<&'a str>>,
    idempotency_key: Option<Option<&'a str>>,
    request_digest: Option<Option<&'a str>>,
}

fn borrowed(field: Option<Option<&str>>) -> Option<Cow<'_, str>> {
    field.flatten().map(Cow::Borrowed)
}

/// Whether `flat` reads `line` as serde does: the same `Peek`, or none
/// at all from `flat`. The fuzz target asks it of every line.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn peek_as_serde(line: &[u8]) -> bool {
    flat(line).is_none_or(|peeked| serde_json::from_slice::<Peek>(line).ok() == Some(peeked))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::scan::testing;

    const MESSAGE: &str = r#"{"v":1,"kind":"message","id":"msg_1","at_ms":1792540809442,"by":"bench","fleet_id":"f","from_agent_id":"a","to_agent_id":"b","correlation_id":"dsc_1","payload":"{\"schema\":\"discussion/v1\",\"body\":\"a \\\"quoted\\\" é\\n\\u00e9\"}"}"#;
    const RECEIPT: &str = r#"{"v":1,"kind":"receipt","id":"rcp_1","at_ms":-5,"by":"x","receipt":"discussion.attempt.reserved","discussion_id":"dsc_1","agent_id":"agent-00","turn":2,"close":false,"x":true,"y":null,"op_lines":3,"op_id":"rcp_1","idempotency_key":"k","request_digest":"d"}"#;

    #[test]
    fn lines_as_discuss_writes_them_are_read_without_serde() {
        for line in [MESSAGE, RECEIPT] {
            let peeked = flat(line.as_bytes()).expect("read by flat");
            assert_eq!(
                Some(&peeked),
                serde_json::from_str::<Peek>(line).ok().as_ref()
            );
        }
        let receipt = flat(RECEIPT.as_bytes()).unwrap();
        assert_eq!((receipt.at_ms, receipt.op_lines), (-5, Some(3)));
        assert_eq!(receipt.agent_id.as_deref(), Some("agent-00"));
    }

    /// What `flat` leaves to serde: lines serde refuses, and valid lines
    /// outside the one shape, each of which serde still reads.
    #[test]
    fn any_other_line_is_left_to_serde() {
        let refused = [
            r#"{"v":1,"kind":"a","kind":"b","at_ms":1,"id":"x"}"#,
            r#"{"v":1,"kind":"a","at_ms":1,"id":"x","op_id":null,"op_id":null}"#,
            r#"{"v":1,"kind":"a","at_ms":-0,"id":"x"}"#,
            r#"{"v":1,"kind":"a","at_ms":01,"id":"x"}"#,
            r#"{"v":1,"kind":"a","at_ms":1.0,"id":"x"}"#,
            r#"{"v":-1,"kind":"a","at_ms":1,"id":"x"}"#,
            r#"{"v":1,"kind":"a","at_ms":9223372036854775808,"id":"x"}"#,
            r#"{"v":1,"kind":null,"at_ms":1,"id":"x"}"#,
            r#"{"v":1,"kind":"a","at_ms":1}"#,
            r#"{"v":1,"kind":"a","at_ms":1,"id":"x","p":"\q"}"#,
            r#"{"v":1,"kind":"a","at_ms":1,"id":"x","p":"\u12"}"#,
            r#"{"v":1,"kind":"a","at_ms":1,"id":"x","p":01}"#,
            r#"{"v":1,"kind":"a","at_ms":1,"id":"x"}x"#,
            r#"{"v":1,"kind":"a","at_ms":1,"id":"x",}"#,
            "{\"v\":1,\"kind\":\"a\u{1}\",\"at_ms\":1,\"id\":\"x\"}",
        ];
        for line in refused {
            assert_eq!(flat(line.as_bytes()), None, "{line}");
            assert!(serde_json::from_str::<Peek>(line).is_err(), "{line}");
        }
        let valid_elsewhere = [
            r#"{"v":1,"kind":"a","at_ms":1,"id":"x\u0041"}"#,
            r#"{"v":1,"kind":"a","at_ms":1,"id":"x","p":{"q":1}}"#,
            r#"{"v":1,"kind":"a","at_ms":1,"id":"x","p":[1]}"#,
            r#"{"v":1,"kind":"a","at_ms":1,"id":"x","p":1.5}"#,
            r#"{"v":1, "kind":"a","at_ms":1,"id":"x"}"#,
            r#"{"v":1,"kind":"a","at_ms":1,"id":"x"} "#,
            r#"{"v":1,"k\u0069nd":"a","at_ms":1,"id":"x"}"#,
        ];
        for line in valid_elsewhere {
            assert_eq!(flat(line.as_bytes()), None, "{line}");
            assert!(serde_json::from_str::<Peek>(line).is_ok(), "{line}");
        }
        // Not UTF-8 where a string is read (serde reads the payload's
        // bytes without asking).
        let mut not_text = RECEIPT.as_bytes().to_vec();
        not_text[40] = 0xff;
        assert_eq!(flat(&not_text), None);
        assert!(serde_json::from_slice::<Peek>(&not_text).is_err());
        let mut payload_not_text = MESSAGE.as_bytes().to_vec();
        let at = MESSAGE.find("quoted").unwrap();
        payload_not_text[at] = 0xff;
        assert_eq!(
            flat(&payload_not_text),
            serde_json::from_slice(&payload_not_text).ok()
        );
        assert!(flat(&payload_not_text).is_some());
        let unknown_key_not_text = b"{\"v\":1,\"kind\":\"a\",\"at_ms\":1,\"id\":\"x\",\"\xff\":1}";
        assert_eq!(flat(unknown_key_not_text), None);
        assert!(serde_json::from_slice::<Peek>(unknown_key_not_text).is_err());
    }

    /// Every corpus line, and each of them with one byte changed at every
    /// place to each byte that matters to the scanner: `flat` reads each
    /// as serde does or leaves it.
    #[test]
    fn flat_reads_what_serde_reads_or_nothing() {
        let lines = testing::corpus_lines(&[MESSAGE, RECEIPT]);
        // Most of the corpus is the fuzzer's wreckage; of its records,
        // those written compact are most.
        let by_serde = lines
            .iter()
            .filter(|line| serde_json::from_slice::<Peek>(line).is_ok())
            .count();
        let by_flat = lines.iter().filter(|line| flat(line).is_some()).count();
        assert!(by_flat * 2 > by_serde, "{by_flat} of {by_serde} lines");
        testing::assert_agrees_under_edits(&lines, peek_as_serde);
    }
}
