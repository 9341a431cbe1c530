//! The versioned discussion envelope carried in a message's `payload`.

use crate::error::{Error, ErrorCode, Result};
use crate::spend::{self, Usd};
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod flat;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use flat::flat_as_serde as envelope_scan_as_serde;

pub const SCHEMA: &str = "discussion/v1";
/// Largest serialized envelope, in UTF-8 bytes.
pub const MAX_ENVELOPE_BYTES: usize = 65_536;

pub const MAX_TURNS: (i64, i64) = (2, 32);
pub const TIMEOUT_MS: (i64, i64) = (1_000, 900_000);
pub const TURN_TIMEOUT_MS: (i64, i64) = (1_000, 300_000);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageType {
    Ask,
    Question,
    Result,
}

impl MessageType {
    pub fn as_str(self) -> &'static str {
        match self {
            MessageType::Ask => "ask",
            MessageType::Question => "question",
            MessageType::Result => "result",
        }
    }
}

/// The immutable limits fixed by the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    pub max_turns: u32,
    pub timeout_ms: i64,
    pub turn_timeout_ms: i64,
    /// Spend budgets (`ask --max-tokens`, `--max-cost-usd`); absent when
    /// none was given, so a policy without them is written as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<Usd>,
}

impl Policy {
    /// Checks the ranges of the seed, each bound inclusive.
    pub fn new(max_turns: i64, timeout_ms: i64, turn_timeout_ms: i64) -> Result<Policy> {
        check_range("max_turns", max_turns, MAX_TURNS)?;
        check_range("timeout_ms", timeout_ms, TIMEOUT_MS)?;
        check_range("turn_timeout_ms", turn_timeout_ms, TURN_TIMEOUT_MS)?;
        if turn_timeout_ms > timeout_ms {
            return Err(Error::new(
                ErrorCode::OutOfRange,
                format!(
                    "turn_timeout_ms ({turn_timeout_ms}) must not exceed timeout_ms ({timeout_ms})"
                ),
            )
            .detail("field", "turn_timeout_ms")
            .detail("value", turn_timeout_ms)
            .detail("max", timeout_ms));
        }
        Ok(Policy {
            max_turns: max_turns as u32,
            timeout_ms,
            turn_timeout_ms,
            max_tokens: None,
            max_cost_usd: None,
        })
    }

    /// The policy with spend budgets: a token budget from 1 to
    /// 1,000,000,000, a cost budget above 0 and at most 1,000,000 dollars.
    pub fn with_spend(
        mut self,
        max_tokens: Option<&Value>,
        max_cost_usd: Option<&Value>,
    ) -> Result<Policy> {
        self.max_tokens = max_tokens
            .map(|v| spend::check_tokens("max_tokens", v, 1))
            .transpose()?;
        self.max_cost_usd = max_cost_usd
            .map(|v| spend::check_usd("max_cost_usd", v, true))
            .transpose()?;
        Ok(self)
    }

    pub fn is_valid(&self) -> bool {
        let max_tokens = self.max_tokens.map(Value::from);
        let max_cost_usd = self.max_cost_usd.map(Usd::to_json);
        Policy::new(self.max_turns.into(), self.timeout_ms, self.turn_timeout_ms)
            .and_then(|p| p.with_spend(max_tokens.as_ref(), max_cost_usd.as_ref()))
            .is_ok()
    }
}

/// `out_of_range` unless `min <= value <= max`.
pub fn check_range(field: &str, value: i64, (min, max): (i64, i64)) -> Result<()> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::OutOfRange,
            format!("{field} must be between {min} and {max}, got {value}"),
        )
        .detail("field", field)
        .detail("value", value)
        .detail("min", min)
        .detail("max", max))
    }
}

/// `B`: the body as kept (`Value`), or read and not kept (`Unkept`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope<B = Value> {
    pub schema: String,
    pub discussion_id: String,
    pub turn: u32,
    #[serde(rename = "type")]
    pub kind: MessageType,
    pub reply_to_message_id: Option<String>,
    pub attempt_id: Option<String>,
    #[serde(default)]
    pub close: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<Policy>,
    pub body: B,
}

impl Envelope {
    pub fn root(discussion_id: &str, policy: Policy, body: Value) -> Envelope {
        Envelope {
            schema: SCHEMA.into(),
            discussion_id: discussion_id.into(),
            turn: 1,
            kind: MessageType::Ask,
            reply_to_message_id: None,
            attempt_id: None,
            close: false,
            policy: Some(policy),
            body,
        }
    }

    /// Parses a payload as an envelope of `discussion_id`, checking the
    /// shape its type requires. The error says what is wrong.
    pub fn parse(payload: &str, discussion_id: &str) -> Result<Envelope, String> {
        let envelope: Envelope =
            serde_json::from_str(payload).map_err(|e| format!("envelope does not parse: {e}"))?;
        envelope.check(discussion_id)?;
        Ok(envelope)
    }

    /// `parse` with the body read and not kept (`null`): what a fold that
    /// keeps no contents needs, without building the body. The same
    /// answer as `parse` but for the body: `Unkept` takes what `Value`
    /// takes, and what it refuses is parsed again by `parse` for its
    /// words.
    ///
    /// A payload written the way `discuss` writes one is read by a scanner
    /// of its own (`flat`), exact or none; serde reads any other.
    pub fn parse_without_body(payload: &str, discussion_id: &str) -> Result<Envelope, String> {
        let Some(envelope) = flat::envelope(payload)
            .or_else(|| serde_json::from_str::<Envelope<Unkept>>(payload).ok())
        else {
            return Envelope::parse(payload, discussion_id);
        };
        envelope.check(discussion_id)?;
        Ok(envelope.without_body())
    }
}

impl<B> Envelope<B> {
    /// The shape its type requires, and the discussion it names: what
    /// `parse` checks past the JSON.
    fn check(&self, discussion_id: &str) -> Result<(), String> {
        if self.schema != SCHEMA {
            return Err(format!("unknown schema {:?}", self.schema));
        }
        if self.discussion_id != discussion_id {
            return Err(format!(
                "envelope names discussion {} but the message is correlated to {discussion_id}",
                self.discussion_id
            ));
        }
        if self.kind != MessageType::Ask {
            if self.turn < 2 {
                return Err(format!(
                    "a {} must have turn >= 2, has {}",
                    self.kind.as_str(),
                    self.turn
                ));
            }
            if self.reply_to_message_id.is_none() || self.attempt_id.is_none() {
                return Err("a reply needs reply_to_message_id and attempt_id".into());
            }
            if self.policy.is_some() {
                return Err("only the root carries a policy".into());
            }
        }
        Ok(())
    }

    /// The same envelope with a `null` body (what a fold without
    /// contents keeps).
    pub fn without_body(self) -> Envelope {
        Envelope {
            schema: self.schema,
            discussion_id: self.discussion_id,
            turn: self.turn,
            kind: self.kind,
            reply_to_message_id: self.reply_to_message_id,
            attempt_id: self.attempt_id,
            close: self.close,
            policy: self.policy,
            body: Value::Null,
        }
    }
}

impl Envelope {
    /// Problems that make this envelope unfit to be a root, if any.
    pub fn root_problem(&self) -> Option<String> {
        if self.turn != 1 {
            return Some(format!("root has turn {}, not 1", self.turn));
        }
        if self.reply_to_message_id.is_some() || self.attempt_id.is_some() {
            return Some("root must not reply to anything or carry an attempt".into());
        }
        if self.close {
            return Some("root must not close".into());
        }
        match self.policy {
            None => Some("root has no policy".into()),
            Some(policy) if !policy.is_valid() => {
                Some(format!("root policy out of range: {policy:?}"))
            }
            Some(_) => None,
        }
    }

    /// Serializes the envelope; `payload_too_large` past 65,536 bytes.
    pub fn to_payload(&self) -> Result<String> {
        let payload = serde_json::to_string(self).expect("an envelope always serializes");
        if payload.len() > MAX_ENVELOPE_BYTES {
            return Err(Error::new(
                ErrorCode::PayloadTooLarge,
                format!(
                    "the serialized envelope is {} bytes, over the limit of {MAX_ENVELOPE_BYTES}",
                    payload.len()
                ),
            )
            .detail("envelope_bytes", payload.len())
            .detail("max_bytes", MAX_ENVELOPE_BYTES)
            .hint("the limit counts UTF-8 bytes of the whole envelope, metadata included"));
        }
        Ok(payload)
    }
}

/// How deeply a body's arrays and objects may nest. The envelope, the
/// ledger line and every JSON answer wrap the body in a few more levels,
/// and JSON parsers (serde_json's included) stop at 128: this leaves room.
pub const MAX_BODY_DEPTH: usize = 100;

/// Parses a caller's payload: `payload_not_json` when it is not JSON,
/// `invalid_argument` when it nests deeper than `MAX_BODY_DEPTH`.
pub fn parse_body(payload: &str) -> Result<Value> {
    let depth = nesting_depth(payload.as_bytes());
    if depth > MAX_BODY_DEPTH {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!(
                "the payload nests {depth} levels deep; at most {MAX_BODY_DEPTH} levels of arrays and objects are allowed"
            ),
        )
        .detail("depth", depth)
        .detail("max_depth", MAX_BODY_DEPTH)
        .hint("flatten the body, or carry deep data as a string"));
    }
    let body: Value = serde_json::from_str(payload).map_err(|e| {
        Error::new(
            ErrorCode::PayloadNotJson,
            format!("payload is not JSON: {e}"),
        )
        .hint_each(
            r#"pass a JSON value, e.g. --payload '{"body":"Refactor auth module?"}'"#,
            r#"payload is a JSON value serialized as a string, e.g. "{\"body\":\"Refactor auth module?\"}""#,
        )
    })?;
    if let Some(number) = inexact_number(payload) {
        return Err(Error::new(
            ErrorCode::PayloadNotJson,
            format!(
                "the payload's number {number} cannot be kept exactly (it would be stored as {}); a number must fit a 64-bit integer or a double without losing digits",
                stored_as(number)
            ),
        )
        .detail("value", number)
        .hint("send a number this precise as a string, e.g. \"123456789012345678901234567890\""));
    }
    Ok(body)
}

/// The first number in `json` (outside strings) that would not be stored
/// as written: an integer beyond 64 bits, or a decimal with more
/// significant digits than a double keeps, or one that overflows or
/// underflows it. `1e2` and `100` are the same number and pass.
pub fn inexact_number(json: &str) -> Option<&str> {
    let mut end_of_last = 0;
    for (at, byte) in outside_strings(json.as_bytes()) {
        if at < end_of_last || !(byte == b'-' || byte.is_ascii_digit()) {
            continue;
        }
        // A number is one run of these bytes (never a quote).
        let len = json[at..]
            .bytes()
            .take_while(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .count();
        end_of_last = at + len;
        let number = &json[at..end_of_last];
        if !number_is_exact(number) {
            return Some(number);
        }
    }
    None
}

/// The bytes of `json` outside its strings (the quotes left out), with
/// their offsets: what the scans below look at without parsing.
fn outside_strings(json: &[u8]) -> impl Iterator<Item = (usize, u8)> + '_ {
    let (mut in_string, mut escaped) = (false, false);
    json.iter().enumerate().filter_map(move |(at, &byte)| {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            return None;
        }
        if byte == b'"' {
            in_string = true;
            return None;
        }
        Some((at, byte))
    })
}

fn number_is_exact(number: &str) -> bool {
    let integer = !number.contains(['.', 'e', 'E']);
    if integer && (number.parse::<i64>().is_ok() || number.parse::<u64>().is_ok()) {
        return true;
    }
    let Ok(value) = number.parse::<f64>() else {
        return false;
    };
    // The same decimal digits and exponent as the shortest form that
    // reads back as this double.
    value.is_finite() && decimal(number) == decimal(&format!("{value:e}"))
}

/// A decimal number as (negative, significant digits, exponent of the
/// first digit), zeros stripped; zero is `(_, "", 0)`.
fn decimal(number: &str) -> (bool, String, i64) {
    let negative = number.starts_with('-');
    let unsigned = number.trim_start_matches(['-', '+']);
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i64>().unwrap_or(0)),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = whole.chars().chain(fraction.chars()).collect();
    let leading = digits.len() - digits.trim_start_matches('0').len();
    let significant = digits
        .trim_start_matches('0')
        .trim_end_matches('0')
        .to_owned();
    if significant.is_empty() {
        return (false, String::new(), 0);
    }
    let first_digit_exponent = whole.len() as i64 - 1 - leading as i64 + exponent;
    (negative, significant, first_digit_exponent)
}

/// What serde_json would keep of `number`, for the message.
fn stored_as(number: &str) -> String {
    number.parse::<f64>().map_or_else(
        |_| "nothing".to_owned(),
        |v| serde_json::json!(v).to_string(),
    )
}

/// The deepest nesting of `[` and `{` outside strings, counted without
/// parsing (so a body too deep for a parser is still measured).
pub fn nesting_depth(json: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for (_, byte) in outside_strings(json) {
        match byte {
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A JSON value read as `Value` reads one, and not kept: the same
/// deserializer calls (`deserialize_any` all the way down, so the same
/// recursion limit, the same numbers and strings refused), none of the
/// allocations. (`serde::de::IgnoredAny` is not that: it skips nesting
/// past the limit and numbers out of range.)
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unkept;

impl<'de> Deserialize<'de> for Unkept {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Unkept, D::Error> {
        deserializer.deserialize_any(Unkept)
    }
}

impl<'de> serde::de::Visitor<'de> for Unkept {
    type Value = Unkept;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Unkept, E> {
        Ok(Unkept)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Unkept, E> {
        Ok(Unkept)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Unkept, E> {
        Ok(Unkept)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Unkept, E> {
        Ok(Unkept)
    }

    fn visit_str<E>(self, _: &str) -> Result<Unkept, E> {
        Ok(Unkept)
    }

    fn visit_none<E>(self) -> Result<Unkept, E> {
        Ok(Unkept)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Unkept, D::Error> {
        Unkept::deserialize(deserializer)
    }

    fn visit_unit<E>(self) -> Result<Unkept, E> {
        Ok(Unkept)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Unkept, A::Error> {
        while seq.next_element::<Unkept>()?.is_some() {}
        Ok(Unkept)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Unkept, A::Error> {
        while map.next_entry::<Unkept, Unkept>()?.is_some() {}
        Ok(Unkept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_depth_ignores_brackets_in_strings() {
        assert_eq!(nesting_depth(br#"{"a":[1,{"b":"[[[{{{"}]}"#), 3);
        assert_eq!(nesting_depth(br#""\"[""#), 0);
        assert_eq!(nesting_depth(b"7"), 0);
    }

    #[test]
    fn numbers_are_kept_exactly_or_refused() {
        for exact in [
            "0",
            "-0",
            "7",
            "-12",
            "9223372036854775807",
            "18446744073709551615",
            "0.1",
            "1.5",
            "1.50",
            "1e2",
            "100.0",
            "2.5e-3",
            "0.30000000000000004",
            "1.7976931348623157e308",
            "5e-324",
            r#"{"a":[1,2.25,"123456789012345678901234567890"]}"#,
        ] {
            assert_eq!(inexact_number(exact), None, "{exact}");
        }
        for inexact in [
            "123456789012345678901234567890",
            "18446744073709551616",
            "0.1e-400",
            "1e400",
            "0.1000000000000000055511151231257827",
            "3.14159265358979323846",
        ] {
            assert_eq!(inexact_number(inexact), Some(inexact), "{inexact}");
        }
        assert_eq!(inexact_number(r#"{"n":[1, 1e999]}"#), Some("1e999"));
    }

    /// `parse_without_body` answers as `parse` does, but for the body:
    /// bodies at the edges of what `Value` takes (nesting at serde_json's
    /// limit, numbers out of range, escapes, repeated keys) and envelopes
    /// refused for other reasons.
    #[test]
    fn an_envelope_without_its_body_is_parsed_as_with_it() {
        let head = r#"{"schema":"discussion/v1","discussion_id":"dsc_1","turn":2,"type":"result","reply_to_message_id":"m","attempt_id":"a","close":true,"body":"#;
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let mut bodies: Vec<String> = [
            r#"{"a":[1,-2,3.5e10,true,null,"x\u00e9\n"],"a":{}}"#,
            "1e400",
            "-1e400",
            "1e-400",
            "18446744073709551616",
            "-9223372036854775809",
            r#""\ud800""#,
            r#""\ud83d\ude00""#,
            r#""\q""#,
            r#"{"k":}"#,
            r#"{1:2}"#,
            "[1,]",
            "nul",
            "",
        ]
        .map(String::from)
        .to_vec();
        bodies.extend([120, 125, 126, 127, 128, 200].map(nested));
        bodies.push(format!(r#"{{"a":{}}}"#, nested(126)));
        let mut payloads: Vec<String> = bodies.iter().map(|b| format!("{head}{b}}}")).collect();
        payloads.extend([
            format!("{head}1,\"body\":2}}"),
            format!("{head}1,\"turn\":3}}"),
            head.replace("dsc_1", "dsc_2") + "1}",
            head.replace(r#","body":"#, "}"),
            head.replace(r#""result""#, r#""ask""#) + "1}",
            head.replace("discussion/v1", "discussion/v2") + "1}",
            format!("{head}1}} "),
            format!("{head}1}}x"),
        ]);
        let mut refused = 0;
        for payload in &payloads {
            let whole = Envelope::parse(payload, "dsc_1").map(Envelope::without_body);
            refused += usize::from(whole.is_err());
            assert_eq!(
                Envelope::parse_without_body(payload, "dsc_1"),
                whole,
                "{payload}"
            );
        }
        // Both kinds are among them.
        assert!(refused > 10 && refused < payloads.len() - 5, "{refused}");
    }

    #[test]
    fn root_serializes_in_the_documented_order() {
        let policy = Policy::new(4, 300_000, 60_000).unwrap();
        let env = Envelope::root("dsc_1", policy, serde_json::json!({"body": "hi"}));
        assert_eq!(
            env.to_payload().unwrap(),
            r#"{"schema":"discussion/v1","discussion_id":"dsc_1","turn":1,"type":"ask","reply_to_message_id":null,"attempt_id":null,"close":false,"policy":{"max_turns":4,"timeout_ms":300000,"turn_timeout_ms":60000},"body":{"body":"hi"}}"#
        );
        assert_eq!(
            Envelope::parse(&env.to_payload().unwrap(), "dsc_1").unwrap(),
            env
        );
        assert!(Envelope::parse(&env.to_payload().unwrap(), "dsc_2").is_err());
    }

    #[test]
    fn policy_ranges_are_inclusive() {
        assert!(Policy::new(2, 1_000, 1_000).is_ok());
        assert!(Policy::new(32, 900_000, 300_000).is_ok());
        assert_eq!(
            Policy::new(1, 1_000, 1_000).unwrap_err().code,
            ErrorCode::OutOfRange
        );
        assert_eq!(
            Policy::new(33, 1_000, 1_000).unwrap_err().code,
            ErrorCode::OutOfRange
        );
        assert_eq!(
            Policy::new(4, 999, 999).unwrap_err().code,
            ErrorCode::OutOfRange
        );
        assert_eq!(
            Policy::new(4, 900_001, 1_000).unwrap_err().code,
            ErrorCode::OutOfRange
        );
        assert_eq!(
            Policy::new(4, 900_000, 300_001).unwrap_err().code,
            ErrorCode::OutOfRange
        );
        assert_eq!(
            Policy::new(4, 2_000, 2_001).unwrap_err().code,
            ErrorCode::OutOfRange
        );
    }

    #[test]
    fn replies_need_their_links() {
        let reply = r#"{"schema":"discussion/v1","discussion_id":"dsc_1","turn":2,"type":"result","reply_to_message_id":null,"attempt_id":"att_1","close":false,"body":1}"#;
        assert!(
            Envelope::parse(reply, "dsc_1")
                .unwrap_err()
                .contains("reply_to_message_id")
        );
    }
}
