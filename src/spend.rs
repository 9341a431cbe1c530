//! What turns cost, as their agents report it (`usage`), and the budgets
//! and caps it is held to. Money is exact: an amount is a whole number of
//! nano-dollars, read from its decimal text and summed as an integer, so
//! 0.1 + 0.2 is 0.3.

use crate::error::{Error, ErrorCode, Result};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;

/// The most one usage field may report in tokens, and the largest token
/// budget or cap.
pub const MAX_TOKENS: u64 = 1_000_000_000;
/// Decimal places an amount of money may have (nano-dollars).
pub const USD_DECIMALS: u32 = 9;
const NANOS_PER_USD: u64 = 1_000_000_000;
/// The largest cost budget or cap, and the most one turn may report.
pub const MAX_USD: Usd = Usd(1_000_000 * NANOS_PER_USD);

/// An amount of US dollars, exact to the nano-dollar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Usd(u64);

impl Usd {
    pub const ZERO: Usd = Usd(0);

    pub fn nanos(self) -> u64 {
        self.0
    }

    pub fn from_nanos(nanos: u64) -> Usd {
        Usd(nanos)
    }

    pub fn saturating_add(self, other: Usd) -> Usd {
        Usd(self.0.saturating_add(other.0))
    }

    /// Reads decimal text (`0.25`, `3`, `1e-3` is refused): digits, an
    /// optional point and at most nine decimals. `None` when it is not
    /// such a number or does not fit.
    pub fn parse_decimal(text: &str) -> Option<Usd> {
        let (whole, fraction) = match text.split_once('.') {
            Some((whole, fraction)) => (whole, fraction),
            None => (text, ""),
        };
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        let point_without_digits = text.contains('.') && fraction.is_empty();
        if whole.is_empty() || point_without_digits || !digits(whole) || !digits(fraction) {
            return None;
        }
        // Trailing zeros say nothing (`0.500` is `0.5`).
        let fraction = fraction.trim_end_matches('0');
        if fraction.len() > USD_DECIMALS as usize {
            return None;
        }
        let whole: u64 = whole.parse().ok()?;
        let mut nanos: u64 = if fraction.is_empty() {
            0
        } else {
            fraction.parse().ok()?
        };
        nanos *= 10u64.pow(USD_DECIMALS - fraction.len() as u32);
        whole
            .checked_mul(NANOS_PER_USD)?
            .checked_add(nanos)
            .map(Usd)
    }

    /// A JSON number read exactly as it is written: `0.1` is one tenth.
    /// serde_json keeps a number as the `f64` nearest its text, whose
    /// shortest form is that text again for any number of up to 15
    /// significant digits; that text is what is read.
    pub(crate) fn from_number(number: &serde_json::Number) -> Option<Usd> {
        if let Some(whole) = number.as_u64() {
            return whole.checked_mul(NANOS_PER_USD).map(Usd);
        }
        let float = number.as_f64()?;
        if !float.is_finite() || float < 0.0 {
            return None;
        }
        // Rust prints an f64 in its shortest exact form, never with an
        // exponent.
        Usd::parse_decimal(&format!("{float}"))
    }

    /// The amount as a JSON number: an integer for whole dollars, else
    /// the `f64` of its decimal text.
    pub fn to_json(self) -> Value {
        if self.0.is_multiple_of(NANOS_PER_USD) {
            return Value::from(self.0 / NANOS_PER_USD);
        }
        let float: f64 = self.to_string().parse().unwrap_or(f64::MAX);
        serde_json::Number::from_f64(float).map_or(Value::Null, Value::Number)
    }
}

impl fmt::Display for Usd {
    /// Decimal text without trailing zeros: `0.3`, `12`, `0.000000001`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = self.0 / NANOS_PER_USD;
        let fraction = self.0 % NANOS_PER_USD;
        if fraction == 0 {
            return write!(f, "{whole}");
        }
        let fraction = format!("{fraction:09}");
        write!(f, "{whole}.{}", fraction.trim_end_matches('0'))
    }
}

impl Serialize for Usd {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Usd {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Usd, D::Error> {
        let number = serde_json::Number::deserialize(deserializer)?;
        Usd::from_number(&number).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "{number} is not an amount of dollars (non-negative, at most {USD_DECIMALS} decimals)"
            ))
        })
    }
}

fn out_of_range(field: &str, value: impl Into<Value>, why: String) -> Error {
    Error::new(ErrorCode::OutOfRange, format!("{field} {why}"))
        .detail("field", field)
        .detail("value", value)
}

/// A token count given for `field`: an integer from `min` to
/// [`MAX_TOKENS`].
pub fn check_tokens(field: &str, value: &Value, min: u64) -> Result<u64> {
    let Some(tokens) = value.as_u64() else {
        let why = match value {
            Value::Number(n) if n.as_i64().is_some_and(|n| n < 0) => "must not be negative",
            Value::Number(_) => "must be a whole number of tokens",
            _ => "must be an integer",
        };
        return Err(out_of_range(field, value.clone(), why.to_owned())
            .detail("min", min)
            .detail("max", MAX_TOKENS));
    };
    if !(min..=MAX_TOKENS).contains(&tokens) {
        return Err(out_of_range(
            field,
            tokens,
            format!("must be between {min} and {MAX_TOKENS}, got {tokens}"),
        )
        .detail("min", min)
        .detail("max", MAX_TOKENS));
    }
    Ok(tokens)
}

/// An amount of dollars given for `field`: a JSON number (or, from a
/// command line, decimal text) from 0 (or above 0 when `positive`) to
/// [`MAX_USD`], with at most nine decimals.
pub fn check_usd(field: &str, value: &Value, positive: bool) -> Result<Usd> {
    let amount = match value {
        Value::Number(number) => Usd::from_number(number),
        Value::String(text) => Usd::parse_decimal(text.trim()),
        _ => {
            return Err(
                out_of_range(field, value.clone(), "must be a number of dollars".into())
                    .detail("max", MAX_USD.to_json()),
            );
        }
    };
    let Some(amount) = amount else {
        let negative = match value {
            Value::Number(n) => n.as_f64().is_some_and(|f| f < 0.0),
            Value::String(s) => s.trim().starts_with('-'),
            _ => false,
        };
        let why = if negative {
            "must not be negative".to_owned()
        } else {
            format!("must be a decimal number of dollars with at most {USD_DECIMALS} decimals")
        };
        return Err(out_of_range(field, value.clone(), why).detail("max", MAX_USD.to_json()));
    };
    if amount > MAX_USD || (positive && amount == Usd::ZERO) {
        let least = if positive { "above 0" } else { "at least 0" };
        return Err(out_of_range(
            field,
            value.clone(),
            format!("must be {least} and at most {MAX_USD}, got {amount}"),
        )
        .detail("max", MAX_USD.to_json()));
    }
    Ok(amount)
}

/// What one turn reported it cost. Each field is optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cost_usd: Option<Usd>,
}

impl Usage {
    pub const FIELDS: [&'static str; 3] = ["input_tokens", "output_tokens", "cost_usd"];

    /// Checks a usage object as a caller gives it: an object of the three
    /// optional fields (null is absent), each non-negative and bounded;
    /// any other field is refused.
    pub fn from_json(value: &Value) -> Result<Usage> {
        let Value::Object(fields) = value else {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "usage must be a JSON object like {\"input_tokens\":1200,\"output_tokens\":300,\"cost_usd\":0.012}",
            )
            .detail("field", "usage"));
        };
        if let Some(unknown) = fields.keys().find(|k| !Usage::FIELDS.contains(&k.as_str())) {
            return Err(Error::new(
                ErrorCode::UnknownField,
                format!("unknown usage field {unknown:?}"),
            )
            .detail("field", format!("usage.{unknown}"))
            .detail("allowed", Usage::FIELDS.to_vec())
            .hint("usage takes input_tokens, output_tokens and cost_usd"));
        }
        let given = |name: &str| fields.get(name).filter(|v| !v.is_null());
        Ok(Usage {
            input_tokens: given("input_tokens")
                .map(|v| check_tokens("usage.input_tokens", v, 0))
                .transpose()?,
            output_tokens: given("output_tokens")
                .map(|v| check_tokens("usage.output_tokens", v, 0))
                .transpose()?,
            cost_usd: given("cost_usd")
                .map(|v| match v {
                    // Text is for command-line amounts; JSON says numbers.
                    Value::String(_) => Err(out_of_range(
                        "usage.cost_usd",
                        v.clone(),
                        "must be a JSON number, not a string".into(),
                    )),
                    _ => check_usd("usage.cost_usd", v, false),
                })
                .transpose()?,
        })
    }

    /// Reads `--usage` text (or a usage file's content).
    pub fn parse(text: &str) -> Result<Usage> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("usage is not JSON: {e}"),
            )
            .detail("field", "usage")
        })?;
        Usage::from_json(&value)
    }

    pub fn is_empty(&self) -> bool {
        *self == Usage::default()
    }

    /// Input and output tokens together.
    pub fn tokens(&self) -> u64 {
        self.input_tokens
            .unwrap_or(0)
            .saturating_add(self.output_tokens.unwrap_or(0))
    }

    /// The object a receipt keeps: the fields reported, in a fixed order.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        if let Some(tokens) = self.input_tokens {
            map.insert("input_tokens".into(), tokens.into());
        }
        if let Some(tokens) = self.output_tokens {
            map.insert("output_tokens".into(), tokens.into());
        }
        if let Some(cost) = self.cost_usd {
            map.insert("cost_usd".into(), cost.to_json());
        }
        Value::Object(map)
    }
}

/// A sum of usages: a discussion's spend, or an agent's in a window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spend {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Usd,
}

impl Spend {
    pub fn add(&mut self, usage: &Usage) {
        self.input_tokens = self
            .input_tokens
            .saturating_add(usage.input_tokens.unwrap_or(0));
        self.output_tokens = self
            .output_tokens
            .saturating_add(usage.output_tokens.unwrap_or(0));
        self.cost_usd = self
            .cost_usd
            .saturating_add(usage.cost_usd.unwrap_or(Usd::ZERO));
    }

    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "tokens": self.tokens(),
            "cost_usd": self.cost_usd.to_json(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn money_adds_exactly() {
        let tenth = check_usd("x", &json!(0.1), false).unwrap();
        let fifth = check_usd("x", &json!(0.2), false).unwrap();
        let sum = tenth.saturating_add(fifth);
        assert_eq!(sum.to_string(), "0.3");
        assert_eq!(sum.to_json().to_string(), "0.3");
        assert_eq!(sum, Usd::parse_decimal("0.3").unwrap());
        let mut spend = Spend::default();
        for _ in 0..10 {
            spend.add(&Usage {
                cost_usd: Some(tenth),
                ..Usage::default()
            });
        }
        assert_eq!(spend.cost_usd.to_json(), json!(1));
    }

    #[test]
    fn decimal_text_reads_exactly_or_not_at_all() {
        assert_eq!(Usd::parse_decimal("12").unwrap().nanos(), 12_000_000_000);
        assert_eq!(Usd::parse_decimal("0.000000001").unwrap().nanos(), 1);
        assert_eq!(Usd::parse_decimal("1.500").unwrap().to_string(), "1.5");
        for bad in [
            "",
            ".5",
            "1.",
            "-1",
            "1e3",
            "0.0000000001",
            "1,5",
            "NaN",
            "inf",
        ] {
            assert_eq!(Usd::parse_decimal(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn bad_amounts_and_counts_are_refused_with_out_of_range() {
        for bad in [
            json!(-0.01),
            json!(1_000_000.01),
            json!("0.1"),
            json!(1e-12),
            json!(true),
        ] {
            let usage = json!({ "cost_usd": bad });
            let err = Usage::from_json(&usage).unwrap_err();
            assert_eq!(err.code, ErrorCode::OutOfRange, "{usage}");
        }
        for bad in [
            json!(-1),
            json!(1.5),
            json!(1_000_000_001u64),
            json!("9"),
            json!(1e300),
        ] {
            let usage = json!({ "input_tokens": bad });
            let err = Usage::from_json(&usage).unwrap_err();
            assert_eq!(err.code, ErrorCode::OutOfRange, "{usage}");
        }
        let err = Usage::from_json(&json!({"tokens": 3})).unwrap_err();
        assert_eq!(err.code, ErrorCode::UnknownField);
        let err = Usage::from_json(&json!([1])).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        assert!(check_usd("max_cost_usd", &json!(0), true).is_err());
        assert!(check_usd("max_cost_usd", &json!("0.5"), true).is_ok());
    }

    #[test]
    fn usage_round_trips_through_its_object() {
        let usage =
            Usage::parse(r#"{"input_tokens":1200,"cost_usd":0.012,"output_tokens":null}"#).unwrap();
        assert_eq!(usage.tokens(), 1200);
        assert_eq!(
            usage.to_json().to_string(),
            r#"{"input_tokens":1200,"cost_usd":0.012}"#
        );
        assert_eq!(Usage::from_json(&usage.to_json()).unwrap(), usage);
    }
}
