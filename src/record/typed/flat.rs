//! A record's `Line` read by the scanner (`record/scan.rs`) when it is
//! written the way `discuss` writes one, not through serde: exact or none.
//! For a line it reads, the same `Line` serde reads (`flat_as_serde`
//! checks it; the fuzz target asks it of every line); any other line, even
//! a valid one, is left to serde.

use super::Line;
use crate::record::scan::{Scan, once};
use std::borrow::Cow;

/// The line's `Line`, or `None` for serde to read it.
pub(super) fn line(bytes: &[u8]) -> Option<Line<'_>> {
    let mut scan = Scan::object(bytes)?;
    let mut f = Fields::default();
    loop {
        let key = scan.key()?;
        let s = &mut scan;
        match key {
            b"v" => once(&mut f.v, s.unsigned()?)?,
            b"kind" => once(&mut f.kind, s.string()?)?,
            b"id" => once(&mut f.id, s.owned()?)?,
            b"at_ms" => once(&mut f.at_ms, s.signed()?)?,
            b"by" => once(&mut f.by, s.owned()?)?,
            b"op_lines" => once(&mut f.op_lines, s.nullable(Scan::unsigned)?)?,
            b"op_id" => once(&mut f.op_id, s.nullable(Scan::owned)?)?,
            b"idempotency_key" => once(&mut f.idempotency_key, s.nullable(Scan::owned)?)?,
            b"request_digest" => once(&mut f.request_digest, s.nullable(Scan::owned)?)?,
            b"fleet_id" => once(&mut f.fleet_id, s.nullable(Scan::owned)?)?,
            b"from_agent_id" => once(&mut f.from_agent_id, s.nullable(Scan::owned)?)?,
            b"to_agent_id" => once(&mut f.to_agent_id, s.nullable(Scan::owned)?)?,
            b"correlation_id" => once(&mut f.correlation_id, s.nullable(Scan::owned)?)?,
            b"payload" => once(&mut f.payload, s.nullable(Scan::owned)?)?,
            b"receipt" => once(&mut f.receipt, s.nullable(Scan::owned)?)?,
            b"discussion_id" => once(&mut f.discussion_id, s.nullable(Scan::owned)?)?,
            b"attempt_id" => once(&mut f.attempt_id, s.nullable(Scan::owned)?)?,
            b"agent_id" => once(&mut f.agent_id, s.nullable(Scan::owned)?)?,
            b"turn" => once(&mut f.turn, s.nullable(unsigned32)?)?,
            b"head_message_id" => once(&mut f.head_message_id, s.nullable(Scan::owned)?)?,
            b"deadline_ms" => once(&mut f.deadline_ms, s.nullable(Scan::signed)?)?,
            b"pid" => once(&mut f.pid, s.nullable(unsigned32)?)?,
            b"message_id" => once(&mut f.message_id, s.nullable(Scan::owned)?)?,
            b"reason" => once(&mut f.reason, s.nullable(Scan::owned)?)?,
            b"exit_code" => once(&mut f.exit_code, s.nullable(signed32)?)?,
            b"signal" => once(&mut f.signal, s.nullable(signed32)?)?,
            b"turns_used" => once(&mut f.turns_used, s.nullable(unsigned32)?)?,
            b"detail" => once(&mut f.detail, s.nullable(Scan::owned)?)?,
            b"usage" => once(&mut f.usage, s.nullable(nested_value)?)?,
            b"escalation_receipt_id" => {
                once(&mut f.escalation_receipt_id, s.nullable(Scan::owned)?)?
            }
            b"usage_unreadable" => once(&mut f.usage_unreadable, s.nullable(Scan::boolean)?)?,
            // Approvals are rare: left to serde unless null.
            b"approval_id" => once(&mut f.approval_id, s.nullable(|_| None)?)?,
            b"rule" => once(&mut f.rule, s.nullable(|_| None)?)?,
            b"spend" => once(&mut f.spend, s.nullable(|_| None)?)?,
            b"into" => once(&mut f.into, s.nullable(Scan::owned)?)?,
            b"via" => once(&mut f.via, s.nullable(Scan::owned)?)?,
            b"op" => once(&mut f.op, s.nullable(Scan::owned)?)?,
            b"engaged" => once(&mut f.engaged, s.nullable(Scan::boolean)?)?,
            // A scoped switch is rare: left to serde unless null.
            b"scope" => once(&mut f.scope, s.nullable(|_| None)?)?,
            b"wakes_per_hour" => once(&mut f.wakes_per_hour, s.nullable(unsigned32)?)?,
            b"tokens_per_hour" => once(&mut f.tokens_per_hour, s.nullable(Scan::unsigned)?)?,
            b"token_id" => once(&mut f.token_id, s.nullable(Scan::owned)?)?,
            b"sha256" => once(&mut f.sha256, s.nullable(Scan::owned)?)?,
            b"expires_ms" => once(&mut f.expires_ms, s.nullable(Scan::signed)?)?,
            // Read by a type's own rules (money, a role): left to serde
            // unless null.
            b"cost_usd_per_day" => once(&mut f.cost_usd_per_day, s.nullable(|_| None)?)?,
            b"role" => once(&mut f.role, s.nullable(|_| None)?)?,
            _ => s.skip_value_of(key)?,
        }
        if scan.object_ends()? {
            break;
        }
    }
    Some(Line {
        v: f.v?,
        kind: f.kind?,
        id: f.id?,
        at_ms: f.at_ms?,
        by: f.by?,
        op_lines: f.op_lines.flatten(),
        op_id: f.op_id.flatten(),
        idempotency_key: f.idempotency_key.flatten(),
        request_digest: f.request_digest.flatten(),
        fleet_id: f.fleet_id.flatten(),
        from_agent_id: f.from_agent_id.flatten(),
        to_agent_id: f.to_agent_id.flatten(),
        correlation_id: f.correlation_id.flatten(),
        payload: f.payload.flatten(),
        receipt: f.receipt.flatten(),
        discussion_id: f.discussion_id.flatten(),
        attempt_id: f.attempt_id.flatten(),
        agent_id: f.agent_id.flatten(),
        turn: f.turn.flatten(),
        head_message_id: f.head_message_id.flatten(),
        deadline_ms: f.deadline_ms.flatten(),
        pid: f.pid.flatten(),
        message_id: f.message_id.flatten(),
        reason: f.reason.flatten(),
        exit_code: f.exit_code.flatten(),
        signal: f.signal.flatten(),
        turns_used: f.turns_used.flatten(),
        detail: f.detail.flatten(),
        usage: f.usage.flatten(),
        escalation_receipt_id: f.escalation_receipt_id.flatten(),
        usage_unreadable: f.usage_unreadable.flatten(),
        approval_id: None,
        rule: None,
        spend: None,
        into: f.into.flatten(),
        via: f.via.flatten(),
        op: f.op.flatten(),
        engaged: f.engaged.flatten(),
        scope: None,
        wakes_per_hour: f.wakes_per_hour.flatten(),
        tokens_per_hour: f.tokens_per_hour.flatten(),
        cost_usd_per_day: None,
        token_id: f.token_id.flatten(),
        role: None,
        sha256: f.sha256.flatten(),
        expires_ms: f.expires_ms.flatten(),
    })
}

fn unsigned32(scan: &mut Scan<'_>) -> Option<u32> {
    u32::try_from(scan.unsigned()?).ok()
}

fn signed32(scan: &mut Scan<'_>) -> Option<i32> {
    i32::try_from(scan.signed()?).ok()
}

/// An object or an array, read by serde on its own: what it reads
/// there is what it reads in the line.
fn nested_value(scan: &mut Scan<'_>) -> Option<Box<serde_json::Value>> {
    serde_json::from_slice(scan.nested()?).ok()
}

/// The fields seen so far: `Some` once a field is there, `Some(None)` for
/// `null`.
#[derive(Default)]
struct Fields<'a> {
    v: Option<u64>,
    kind: Option<Cow<'a, str>>,
    id: Option<String>,
    at_ms: Option<i64>,
    by: Option<String>,
    op_lines: Option<Option<u64>>,
    op_id: Option<Option<String>>,
    idempotency_key: Option<Option<String>>,
    request_digest: Option<Option<String>>,
    fleet_id: Option<Option<String>>,
    from_agent_id: Option<Option<String>>,
    to_agent_id: Option<Option<String>>,
    correlation_id: Option<Option<String>>,
    payload: Option<Option<String>>,
    receipt: Option<Option<String>>,
    discussion_id: Option<Option<String>>,
    attempt_id: Option<Option<String>>,
    agent_id: Option<Option<String>>,
    turn: Option<Option<u32>>,
    head_message_id: Option<Option<String>>,
    deadline_ms: Option<Option<i64>>,
    pid: Option<Option<u32>>,
    message_id: Option<Option<String>>,
    reason: Option<Option<String>>,
    exit_code: Option<Option<i32>>,
    signal: Option<Option<i32>>,
    turns_used: Option<Option<u32>>,
    detail: Option<Option<String>>,
    usage: Option<Option<Box<serde_json::Value>>>,
    escalation_receipt_id: Option<Option<String>>,
    usage_unreadable: Option<Option<bool>>,
    approval_id: Option<Option<()>>,
    rule: Option<Option<()>>,
    spend: Option<Option<()>>,
    into: Option<Option<String>>,
    via: Option<Option<String>>,
    op: Option<Option<String>>,
    engaged: Option<Option<bool>>,
    scope: Option<Option<()>>,
    wakes_per_hour: Option<Option<u32>>,
    tokens_per_hour: Option<Option<u64>>,
    cost_usd_per_day: Option<Option<()>>,
    token_id: Option<Option<String>>,
    role: Option<Option<()>>,
    sha256: Option<Option<String>>,
    expires_ms: Option<Option<i64>>,
}

/// Whether `line` reads `bytes` as serde does: the same `Line`, or none
/// at all from `line`. The fuzz target asks it of every line.
pub(in crate::record) fn flat_as_serde(bytes: &[u8]) -> bool {
    line(bytes).is_none_or(|flat| serde_json::from_slice::<Line>(bytes).ok() == Some(flat))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::scan::testing;

    const MESSAGE: &str = r#"{"v":1,"kind":"message","id":"msg_1","at_ms":1792540809442,"by":"bench","fleet_id":"f","from_agent_id":"a","to_agent_id":"b","correlation_id":"dsc_1","payload":"{\"schema\":\"discussion/v1\",\"body\":\"a \\\"quoted\\\" é\\n\\u00e9 \u00e9\/\b\f\r\t\u20ac\"}","op_lines":2,"op_id":"msg_1","idempotency_key":"k","request_digest":"d"}"#;
    const RECEIPT: &str = r#"{"v":1,"kind":"receipt","id":"rcp_1","at_ms":-5,"by":"x","receipt":"discussion.attempt.completed","discussion_id":"dsc_1","attempt_id":"att_1","agent_id":"agent-00","turn":2,"head_message_id":"msg_1","deadline_ms":-9223372036854775808,"pid":4294967295,"message_id":null,"reason":"r","exit_code":-2147483648,"signal":9,"turns_used":3,"detail":"d","usage":{"input_tokens":10,"cost_usd":"0.25","x":[1.5,{"y":null}]},"escalation_receipt_id":null,"close":false,"x":true,"y":null,"z":-3}"#;
    const OTHERS: [&str; 4] = [
        r#"{"v":1,"kind":"fleet","id":"f1","at_ms":1,"by":"op","op":"add","fleet_id":"f","agent_id":"a"}"#,
        r#"{"v":1,"kind":"kill_switch","id":"k1","at_ms":1,"by":"op","engaged":true,"reason":null}"#,
        r#"{"v":1,"kind":"quota","id":"q1","at_ms":1,"by":"op","agent_id":"a","wakes_per_hour":7,"tokens_per_hour":18446744073709551615,"cost_usd_per_day":null}"#,
        r#"{"v":1,"kind":"credential","id":"c1","at_ms":1,"by":"op","op":"revoke","token_id":"t","sha256":"ab","expires_ms":5,"role":null}"#,
    ];

    #[test]
    fn lines_as_discuss_writes_them_are_read_without_serde() {
        for text in [MESSAGE, RECEIPT].into_iter().chain(OTHERS) {
            let flat = line(text.as_bytes()).unwrap_or_else(|| panic!("read by flat: {text}"));
            assert_eq!(
                Some(&flat),
                serde_json::from_str::<Line>(text).ok().as_ref()
            );
        }
        let message = line(MESSAGE.as_bytes()).unwrap();
        assert_eq!(
            message.payload.as_deref(),
            Some(
                "{\"schema\":\"discussion/v1\",\"body\":\"a \\\"quoted\\\" é\\n\\u00e9 é/\u{8}\u{c}\r\t€\"}"
            )
        );
        let receipt = line(RECEIPT.as_bytes()).unwrap();
        assert_eq!((receipt.at_ms, receipt.exit_code), (-5, Some(i32::MIN)));
        assert_eq!(receipt.usage.unwrap()["x"][1]["y"], serde_json::Value::Null);
    }

    /// What `line` leaves to serde: lines serde refuses, and valid lines
    /// outside the one shape, each of which serde still reads.
    #[test]
    fn any_other_line_is_left_to_serde() {
        const HEAD: &str = r#"{"v":1,"kind":"receipt","id":"r","at_ms":1,"by":"b""#;
        let refused = [
            r#","id":"again"}"#,
            r#","turn":1,"turn":null}"#,
            r#","turn":4294967296}"#,
            r#","turn":-1}"#,
            r#","turn":1.0}"#,
            r#","turn":01}"#,
            r#","exit_code":2147483648}"#,
            r#","deadline_ms":-0}"#,
            r#","deadline_ms":9223372036854775808}"#,
            r#","reason":"\ud800"}"#,
            r#","reason":"\q"}"#,
            r#","reason":"\u12"}"#,
            r#","reason":1}"#,
            r#","engaged":"yes"}"#,
            r#","usage":{"a":}}"#,
            r#","usage":{"a":1]}"#,
            r#","role":"wizard"}"#,
            r#","cost_usd_per_day":-1}"#,
            r#","x":1}x"#,
            r#",}"#,
        ];
        for tail in refused {
            let text = format!("{HEAD}{tail}");
            assert_eq!(line(text.as_bytes()), None, "{text}");
            assert!(serde_json::from_str::<Line>(&text).is_err(), "{text}");
        }
        let valid_elsewhere = [
            r#","reason":"\ud83d\ude00"}"#,
            r#","usage":5}"#,
            r#","x":{"q":1}}"#,
            r#","x":1.5}"#,
            r#", "x":1}"#,
            r#","x":1} "#,
            r#","re\u0061son":"r"}"#,
            r#","role":"agent"}"#,
            r#","cost_usd_per_day":1.5}"#,
        ];
        for tail in valid_elsewhere {
            let text = format!("{HEAD}{tail}");
            assert_eq!(line(text.as_bytes()), None, "{text}");
            assert!(serde_json::from_str::<Line>(&text).is_ok(), "{text}");
        }
        let missing = r#"{"v":1,"kind":"receipt","id":"r","at_ms":1}"#;
        assert_eq!(line(missing.as_bytes()), None);
        // Not UTF-8 in a string that is read: refused; in one that is
        // skipped: read, as serde reads it.
        let mut not_text = RECEIPT.as_bytes().to_vec();
        not_text[RECEIPT.find("agent-00").unwrap()] = 0xff;
        assert_eq!(line(&not_text), None);
        assert!(serde_json::from_slice::<Line>(&not_text).is_err());
        let skipped = format!("{HEAD},\"x\":\"\u{e9}\"}}").into_bytes();
        let mut skipped_not_text = skipped.clone();
        skipped_not_text[skipped.len() - 3] = 0xff;
        assert!(line(&skipped_not_text).is_some());
        assert!(flat_as_serde(&skipped_not_text));
    }

    /// Every corpus line, and each of them with one byte changed at every
    /// place to each byte that matters to the scanner: `line` reads each
    /// as serde does or leaves it.
    #[test]
    fn the_scan_reads_what_serde_reads_or_nothing() {
        let mut extra = vec![MESSAGE, RECEIPT];
        extra.extend(OTHERS);
        let lines = testing::corpus_lines(&extra);
        let by_serde = lines
            .iter()
            .filter(|text| serde_json::from_slice::<Line>(text).is_ok())
            .count();
        let by_scan = lines.iter().filter(|text| line(text).is_some()).count();
        assert!(by_scan * 2 > by_serde, "{by_scan} of {by_serde} lines");
        testing::assert_agrees_under_edits(&lines, flat_as_serde);
    }
}
