//! A summary's row read without serde (`discuss` writes one per
//! discussion into the ledger's cache, and a list of a large ledger reads
//! them all back), exact or none as the record's scanner
//! (`record/scan.rs`): for a row it reads, the row serde reads
//! (`flat_as_serde` checks it; the fuzz target asks it of every summary);
//! anything else, even a valid row, is left to serde.

use super::Row;
use crate::discussion::Status;
use crate::record::scan::{Scan, once};
use crate::spend::Usd;

/// The row of a summary (`None` for `null`, a discussion without one);
/// `None` outside for serde to read it.
pub(super) fn row(json: &str) -> Option<Option<Row>> {
    if json == "null" {
        return Some(None);
    }
    let mut scan = Scan::object_of_text(json)?;
    let mut f = Fields::default();
    loop {
        let key = scan.key()?;
        let s = &mut scan;
        match key {
            b"id" => once(&mut f.id, s.owned()?)?,
            b"fleet_id" => once(&mut f.fleet_id, s.nullable(Scan::owned)?)?,
            b"participants" => once(&mut f.participants, strings(s)?)?,
            b"status" => once(&mut f.status, Status::parse(&s.string()?)?)?,
            b"turns_used" => once(&mut f.turns_used, u32::try_from(s.unsigned()?).ok()?)?,
            b"max_turns" => once(&mut f.max_turns, u32::try_from(s.unsigned()?).ok()?)?,
            b"head_message_id" => once(&mut f.head_message_id, s.nullable(Scan::owned)?)?,
            b"head_to_agent_id" => once(&mut f.head_to_agent_id, s.nullable(Scan::owned)?)?,
            b"updated_at_ms" => once(&mut f.updated_at_ms, s.signed()?)?,
            b"escalated" => once(&mut f.escalated, s.boolean()?)?,
            b"live_attempt_id" => once(&mut f.live_attempt_id, s.nullable(Scan::owned)?)?,
            b"live_attempt_deadline_ms" => {
                once(&mut f.live_attempt_deadline_ms, s.nullable(Scan::signed)?)?
            }
            b"approval_expires_ms" => once(&mut f.approval_expires_ms, s.nullable(Scan::signed)?)?,
            b"live_attempt_delivery" => {
                once(&mut f.live_attempt_delivery, s.nullable(Scan::owned)?)?
            }
            b"tokens" => once(&mut f.tokens, s.unsigned()?)?,
            // Whole dollars only: a fraction is a float, read by serde's
            // rules.
            b"cost_usd" => once(
                &mut f.cost_usd,
                Usd::from_number(&serde_json::Number::from(s.unsigned()?))?,
            )?,
            // Unknown to a row: serde refuses it.
            _ => return None,
        }
        if scan.object_ends()? {
            break;
        }
    }
    Some(Some(Row {
        id: f.id?,
        fleet_id: f.fleet_id.flatten(),
        participants: f.participants?,
        status: f.status?,
        turns_used: f.turns_used?,
        max_turns: f.max_turns?,
        head_message_id: f.head_message_id.flatten(),
        head_to_agent_id: f.head_to_agent_id.flatten(),
        updated_at_ms: f.updated_at_ms?,
        escalated: f.escalated?,
        live_attempt_id: f.live_attempt_id.flatten(),
        live_attempt_deadline_ms: f.live_attempt_deadline_ms.flatten(),
        approval_expires_ms: f.approval_expires_ms.flatten(),
        live_attempt_delivery: f.live_attempt_delivery.flatten(),
        tokens: f.tokens?,
        cost_usd: f.cost_usd?,
    }))
}

/// The fields seen so far: `Some` once a field is there (serde refuses a
/// field twice, even `null` twice).
#[derive(Default)]
struct Fields {
    id: Option<String>,
    fleet_id: Option<Option<String>>,
    participants: Option<Vec<String>>,
    status: Option<Status>,
    turns_used: Option<u32>,
    max_turns: Option<u32>,
    head_message_id: Option<Option<String>>,
    head_to_agent_id: Option<Option<String>>,
    updated_at_ms: Option<i64>,
    escalated: Option<bool>,
    live_attempt_id: Option<Option<String>>,
    live_attempt_deadline_ms: Option<Option<i64>>,
    approval_expires_ms: Option<Option<i64>>,
    live_attempt_delivery: Option<Option<String>>,
    tokens: Option<u64>,
    cost_usd: Option<Usd>,
}

/// An array of strings.
fn strings(scan: &mut Scan<'_>) -> Option<Vec<String>> {
    let mut all = Vec::new();
    if scan.array_opens()? {
        loop {
            all.push(scan.owned()?);
            if !scan.member_follows(b']')? {
                break;
            }
        }
    }
    Some(all)
}

/// Whether `row` reads `json` as serde does: the same row, or none at all
/// from `row`. The fuzz target asks it of every summary.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn flat_as_serde(json: &str) -> bool {
    row(json).is_none_or(|flat| serde_json::from_str::<Option<Row>>(json).ok() == Some(flat))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of every shape a summary keeps: a root or none, a live
    /// attempt or none, spend in whole dollars and in a fraction, strings
    /// with something to escape.
    fn rows() -> Vec<String> {
        let settled = Row {
            id: "dsc_1".into(),
            fleet_id: Some("fleet-a".into()),
            participants: vec!["agent-a".into(), "agent-\"b\"\\é".into()],
            status: Status::Exhausted,
            turns_used: 4,
            max_turns: 4,
            head_message_id: Some("msg_1".into()),
            head_to_agent_id: Some("agent-a".into()),
            updated_at_ms: 1_792_541_008_703,
            escalated: true,
            live_attempt_id: None,
            live_attempt_deadline_ms: None,
            approval_expires_ms: None,
            live_attempt_delivery: None,
            tokens: 1500,
            cost_usd: Usd::from_nanos(3_000_000_000),
        };
        let live = Row {
            status: Status::Active,
            escalated: false,
            live_attempt_id: Some("att_1".into()),
            live_attempt_deadline_ms: Some(-5),
            cost_usd: Usd::from_nanos(250_000_000),
            ..settled.clone()
        };
        let rootless = Row {
            fleet_id: None,
            participants: Vec::new(),
            status: Status::Invalid,
            head_message_id: None,
            head_to_agent_id: None,
            tokens: 0,
            cost_usd: Usd::ZERO,
            ..settled.clone()
        };
        let mut rows: Vec<String> = [settled, live, rootless]
            .iter()
            .map(|row| serde_json::to_string(&Some(row)).unwrap())
            .collect();
        rows.push("null".into());
        rows
    }

    #[test]
    fn rows_as_discuss_writes_them_are_read_without_serde() {
        let rows = rows();
        // All but the fractional cost, which is serde's.
        let read: Vec<&String> = rows.iter().filter(|json| row(json).is_some()).collect();
        assert_eq!(read.len(), 3, "{read:?}");
        for json in read {
            assert_eq!(
                row(json).map(|row| row.map(|r| r.id)),
                Some(
                    serde_json::from_str::<Option<Row>>(json)
                        .unwrap()
                        .map(|r| r.id)
                )
            );
            assert!(flat_as_serde(json), "{json}");
        }
        assert_eq!(
            row(&rows[0]).unwrap().unwrap().participants[1],
            "agent-\"b\"\\é"
        );
    }

    /// What the scanner leaves to serde: rows serde refuses, and valid
    /// ones outside the shape it reads, each of which serde reads.
    #[test]
    fn any_other_row_is_left_to_serde() {
        let row0 = &rows()[0];
        let refused = [
            row0.replace(r#""tokens":1500"#, r#""tokens":1500,"tokens":1500"#),
            row0.replace(r#""tokens":1500,"#, ""),
            row0.replace(r#""tokens":1500"#, r#""tokens":1500,"extra":1"#),
            row0.replace(r#""status":"exhausted""#, r#""status":"terminal""#),
            row0.replace(r#""turns_used":4"#, r#""turns_used":4294967296"#),
            row0.replace(r#""escalated":true"#, r#""escalated":null"#),
            row0.replace(r#""cost_usd":3"#, r#""cost_usd":-3"#),
            // serde reads `-0` as a float.
            row0.replace(r#""updated_at_ms":1792541008703"#, r#""updated_at_ms":-0"#),
            row0.replace(r#""participants":["#, r#""participants":[1,"#),
            row0.replace(r#"é"]"#, r#"é",]"#),
            format!("{row0}x"),
        ];
        let valid_elsewhere = [
            row0.replace(r#""cost_usd":3"#, r#""cost_usd":3.5"#),
            row0.replace(r#""tokens":1500"#, r#""tokens": 1500"#),
            row0.replace(r#""status":"exhausted""#, r#""status":"exh\u0061usted""#)
                .replace(r#""id":"dsc_1""#, r#""\u0069d":"dsc_1""#),
            row0.replace(
                r#""live_attempt_id":null,"live_attempt_deadline_ms":null,"#,
                "",
            ),
            format!("{row0} "),
        ];
        for (rows, valid) in [(&refused[..], false), (&valid_elsewhere[..], true)] {
            for json in rows {
                let serde = serde_json::from_str::<Option<Row>>(json);
                assert_eq!(serde.is_ok(), valid, "{json}");
                if valid && row(json).is_some() {
                    assert!(flat_as_serde(json), "{json}");
                } else {
                    assert!(row(json).is_none(), "{json}");
                }
            }
        }
        // A row without the fields added later is still read, as serde
        // reads it.
        let older = &valid_elsewhere[3];
        assert!(row(older).is_some() && flat_as_serde(older));
    }

    /// Each of the rows with each byte changed to each byte that matters
    /// to a scanner.
    #[test]
    fn the_scanner_reads_as_serde_under_edits() {
        let rows: Vec<Vec<u8>> = rows().into_iter().map(String::into_bytes).collect();
        let mut edits = 0;
        for json in &rows {
            for at in 0..json.len() {
                for &b in b"\"\\,:{}[]-0123456789.eEuntrfalse \x01\xc3" {
                    let mut edited = json.clone();
                    edited[at] = b;
                    // A summary's row is text: an edit that is not UTF-8
                    // is no row.
                    if let Ok(edited) = std::str::from_utf8(&edited) {
                        assert!(flat_as_serde(edited), "{edited}");
                        edits += 1;
                    }
                }
            }
        }
        assert!(edits > 10_000, "{edits} edits");
    }
}
