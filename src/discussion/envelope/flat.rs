//! An envelope read without its body (`Envelope<Unkept>`) by the record
//! scanner (`record/scan.rs`) when the payload is written the way
//! `discuss` writes one, not through serde: exact or none. For a payload it
//! reads, the same envelope serde reads (`flat_as_serde` checks it; the
//! fuzz target asks it of every message); any other payload, even a valid
//! one, is left to serde.

use super::{Envelope, MessageType, Policy, Unkept};
use crate::record::scan::{Scan, once};

/// Objects and arrays a body may nest, at most, to be read here: serde's
/// limit (128, the envelope's own object counted) is far beyond.
const BODY_DEPTH: u32 = 64;

/// The payload's envelope, the body checked and not kept; `None` for
/// serde to read it.
pub(super) fn envelope(payload: &str) -> Option<Envelope<Unkept>> {
    let mut scan = Scan::object_of_text(payload)?;
    let mut f = Fields::default();
    loop {
        let key = scan.key()?;
        let s = &mut scan;
        match key {
            b"schema" => once(&mut f.schema, s.owned()?)?,
            b"discussion_id" => once(&mut f.discussion_id, s.owned()?)?,
            b"turn" => once(&mut f.turn, u32::try_from(s.unsigned()?).ok()?)?,
            b"type" => once(&mut f.kind, message_type(s)?)?,
            b"reply_to_message_id" => once(&mut f.reply_to_message_id, s.nullable(Scan::owned)?)?,
            b"attempt_id" => once(&mut f.attempt_id, s.nullable(Scan::owned)?)?,
            b"close" => once(&mut f.close, s.boolean()?)?,
            b"policy" => once(&mut f.policy, s.nullable(policy)?)?,
            b"body" => once(&mut f.body, s.skip_json(BODY_DEPTH)?)?,
            // A field the envelope does not name: serde ignores it its
            // own way.
            _ => return None,
        }
        if scan.object_ends()? {
            break;
        }
    }
    Some(Envelope {
        schema: f.schema?,
        discussion_id: f.discussion_id?,
        turn: f.turn?,
        kind: f.kind?,
        reply_to_message_id: f.reply_to_message_id.flatten(),
        attempt_id: f.attempt_id.flatten(),
        close: f.close.unwrap_or(false),
        policy: f.policy.flatten(),
        body: f.body.map(|()| Unkept)?,
    })
}

/// The fields seen so far: `Some` once a field is there (serde refuses a
/// field twice, even `null` twice).
#[derive(Default)]
struct Fields {
    schema: Option<String>,
    discussion_id: Option<String>,
    turn: Option<u32>,
    kind: Option<MessageType>,
    reply_to_message_id: Option<Option<String>>,
    attempt_id: Option<Option<String>>,
    close: Option<bool>,
    policy: Option<Option<Policy>>,
    body: Option<()>,
}

fn message_type(scan: &mut Scan<'_>) -> Option<MessageType> {
    match scan.string()?.as_ref() {
        "ask" => Some(MessageType::Ask),
        "question" => Some(MessageType::Question),
        "result" => Some(MessageType::Result),
        _ => None,
    }
}

/// A policy without a cost budget (money is read by its own rules:
/// serde's).
fn policy(scan: &mut Scan<'_>) -> Option<Policy> {
    scan.nested_object()?;
    let (mut max_turns, mut timeout_ms, mut turn_timeout_ms) = (None, None, None);
    let mut max_tokens = None;
    loop {
        let key = scan.key()?;
        match key {
            b"max_turns" => once(&mut max_turns, u32::try_from(scan.unsigned()?).ok()?)?,
            b"timeout_ms" => once(&mut timeout_ms, scan.signed()?)?,
            b"turn_timeout_ms" => once(&mut turn_timeout_ms, scan.signed()?)?,
            b"max_tokens" => once(&mut max_tokens, scan.nullable(Scan::unsigned)?)?,
            _ => return None,
        }
        if !scan.member_follows(b'}')? {
            break;
        }
    }
    Some(Policy {
        max_turns: max_turns?,
        timeout_ms: timeout_ms?,
        turn_timeout_ms: turn_timeout_ms?,
        max_tokens: max_tokens.flatten(),
        max_cost_usd: None,
    })
}

/// Whether `envelope` reads `payload` as serde does: the same envelope,
/// or none at all from `envelope`. The fuzz target asks it of every
/// message.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn flat_as_serde(payload: &str) -> bool {
    envelope(payload)
        .is_none_or(|flat| serde_json::from_str::<Envelope<Unkept>>(payload).ok() == Some(flat))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::scan::testing;

    const ROOT: &str = r#"{"schema":"discussion/v1","discussion_id":"dsc_1","turn":1,"type":"ask","reply_to_message_id":null,"attempt_id":null,"close":false,"policy":{"max_turns":4,"timeout_ms":300000,"turn_timeout_ms":60000,"max_tokens":5000},"body":{"kind":"ask","body":"a \"quoted\" é\n\u00e9","n":[1,-2,0,true,false,null,{}],"e":[]}}"#;
    const REPLY: &str = r#"{"schema":"discussion/v1","discussion_id":"dsc_1","turn":2,"type":"result","reply_to_message_id":"msg_1","attempt_id":"att_1","close":true,"body":"done"}"#;

    #[test]
    fn envelopes_as_discuss_writes_them_are_read_without_serde() {
        for payload in [ROOT, REPLY] {
            let flat = envelope(payload).expect("read by the scanner");
            assert_eq!(
                Some(&flat),
                serde_json::from_str::<Envelope<Unkept>>(payload)
                    .ok()
                    .as_ref()
            );
        }
        let root = envelope(ROOT).unwrap();
        assert_eq!(root.policy.and_then(|p| p.max_tokens), Some(5000));
        assert_eq!((root.turn, root.kind), (1, MessageType::Ask));
    }

    /// What the scanner leaves to serde: payloads serde refuses, and
    /// valid ones outside the shape it reads, each of which serde reads.
    #[test]
    fn any_other_payload_is_left_to_serde() {
        let refused = [
            ROOT.replace(r#""turn":1"#, r#""turn":1,"turn":1"#),
            ROOT.replace(r#""close":false"#, r#""close":null"#),
            ROOT.replace(r#""turn":1"#, r#""turn":4294967296"#),
            ROOT.replace(r#""type":"ask""#, r#""type":"Ask""#),
            ROOT.replace(r#""max_turns":4,"#, ""),
            ROOT.replace(r#""n":[1"#, r#""n":[1e400"#),
            ROOT.replace(r#""n":[1"#, r#""n":[01"#),
            ROOT.replace(r#""n":[1"#, &format!(r#""n":[{}"#, "9".repeat(400))),
            ROOT.replace(r#"\u00e9"#, r#"\ud800"#),
            ROOT.replace(r#""e":[]"#, r#""e":[1,]"#),
            REPLY.replace(r#","body":"done""#, ""),
            format!("{REPLY}x"),
        ];
        let valid_elsewhere = [
            ROOT.replace(r#""n":[1"#, r#""n":[1.5"#),
            ROOT.replace(r#""n":[1"#, r#""n":[1e2"#),
            ROOT.replace(r#"\u00e9"#, r#"\ud83d\ude00"#),
            ROOT.replace(r#""max_tokens":5000"#, r#""max_cost_usd":1.5"#),
            ROOT.replace(r#""close":false"#, r#""close":false,"extra":1"#),
            ROOT.replace(r#""max_tokens":5000"#, r#""max_tokens":5000,"x":1"#),
            ROOT.replace(r#""n":[1"#, &format!(r#""n":[{}"#, "9".repeat(301))),
            ROOT.replace(r#"{"kind""#, r#"{"k\u0069nd""#),
            ROOT.replace(
                r#""kind":"ask""#,
                &format!(r#""kind":{}1{}"#, "[".repeat(70), "]".repeat(70)),
            ),
            REPLY.replace(r#""turn":2,"#, r#""turn":2, "#),
            format!("{REPLY} "),
        ];
        for (payloads, valid) in [(&refused[..], false), (&valid_elsewhere[..], true)] {
            for payload in payloads {
                assert_eq!(envelope(payload), None, "{payload}");
                let serde = serde_json::from_str::<Envelope<Unkept>>(payload);
                assert_eq!(serde.is_ok(), valid, "{payload}");
            }
        }
    }

    /// Every message payload of the fuzz corpus, and these two, with each
    /// byte changed to each byte that matters to a scanner.
    #[test]
    fn the_scanner_reads_as_serde_under_edits() {
        let mut payloads: Vec<Vec<u8>> = vec![ROOT.into(), REPLY.into()];
        for line in testing::corpus_lines(&[]) {
            if let Ok(record) = crate::record::Record::parse(&line, 1)
                && let crate::record::Body::Message(message) = record.body
            {
                payloads.push(message.payload.into_bytes());
            }
        }
        payloads.sort();
        payloads.dedup();
        let read = payloads
            .iter()
            .filter(|p| std::str::from_utf8(p).is_ok_and(|p| envelope(p).is_some()))
            .count();
        assert!(read > 10, "{read} payloads read by the scanner");
        // An edit that is not UTF-8 is no payload: a payload is a string.
        testing::assert_agrees_under_edits(&payloads, |payload| {
            std::str::from_utf8(payload).map_or(true, flat_as_serde)
        });
    }
}
