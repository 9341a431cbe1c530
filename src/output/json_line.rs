//! A JSON object written by hand, byte for byte as serde_json writes it,
//! for the views printed a million at a time (`events`): serde_json looks
//! up every byte of every string in its escape table, which was a quarter
//! of the printing thread's instructions. A string with nothing to escape
//! is copied whole; any other goes through serde_json itself.

use serde::Serialize;

/// An object being written into `out`: `open`, its fields in order, `close`.
pub(crate) struct JsonObject<'o> {
    out: &'o mut Vec<u8>,
    first: bool,
}

impl<'o> JsonObject<'o> {
    pub(crate) fn open(out: &'o mut Vec<u8>) -> JsonObject<'o> {
        out.push(b'{');
        JsonObject { out, first: true }
    }

    /// A key of the contract's: plain ASCII, nothing to escape. (Inlined:
    /// called from every field, it is a few stores where it is.)
    #[inline]
    fn key(&mut self, key: &'static str) {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    #[inline]
    pub(crate) fn str(&mut self, key: &'static str, value: &str) {
        self.key(key);
        string(self.out, value);
    }

    /// A time of the contract (`clock::format_ms`): nothing to escape.
    #[inline]
    pub(crate) fn time(&mut self, key: &'static str, ms: i64) {
        self.key(key);
        self.out.push(b'"');
        crate::clock::write_ms(ms, self.out);
        self.out.push(b'"');
    }

    /// A time, or `null`.
    #[inline]
    pub(crate) fn opt_time(&mut self, key: &'static str, ms: Option<i64>) {
        match ms {
            Some(ms) => self.time(key, ms),
            None => self.null(key),
        }
    }

    /// An array of strings.
    #[inline]
    pub(crate) fn strs(&mut self, key: &'static str, values: &[String]) {
        self.key(key);
        self.out.push(b'[');
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            string(self.out, value);
        }
        self.out.push(b']');
    }

    /// An amount of dollars, as its own `Serialize` writes it (a number,
    /// which always serializes into memory, unlike `value`'s any).
    pub(crate) fn usd(&mut self, key: &'static str, usd: crate::spend::Usd) {
        self.key(key);
        serde_json::to_writer(&mut *self.out, &usd)
            .expect("a number always serializes into memory");
    }

    /// `null` for the field.
    #[inline]
    fn null(&mut self, key: &'static str) {
        self.key(key);
        self.out.extend_from_slice(b"null");
    }

    /// A string, or `null`.
    #[inline]
    pub(crate) fn opt_str(&mut self, key: &'static str, value: Option<&str>) {
        self.key(key);
        match value {
            Some(value) => string(self.out, value),
            None => self.out.extend_from_slice(b"null"),
        }
    }

    /// A string when there is one; no field at all when not (serde's
    /// `skip_serializing_if = "Option::is_none"`).
    #[inline]
    pub(crate) fn str_if(&mut self, key: &'static str, value: Option<&str>) {
        if let Some(value) = value {
            self.str(key, value);
        }
    }

    /// A number when there is one; no field at all when not.
    #[inline]
    pub(crate) fn uint_if(&mut self, key: &'static str, value: Option<u64>) {
        if let Some(value) = value {
            self.uint(key, value);
        }
    }

    #[inline]
    pub(crate) fn uint(&mut self, key: &'static str, value: u64) {
        self.key(key);
        self.digits(value);
    }

    #[inline]
    fn digits(&mut self, value: u64) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut rest = value;
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        self.out.extend_from_slice(&digits[at..]);
    }

    /// A signed number.
    #[inline]
    pub(crate) fn int(&mut self, key: &'static str, value: i64) {
        self.key(key);
        if value < 0 {
            self.out.push(b'-');
        }
        self.digits(value.unsigned_abs());
    }

    /// A signed number, or `null`.
    #[inline]
    pub(crate) fn opt_int(&mut self, key: &'static str, value: Option<i64>) {
        match value {
            Some(value) => self.int(key, value),
            None => self.null(key),
        }
    }

    /// A number, or `null`.
    #[inline]
    pub(crate) fn opt_uint(&mut self, key: &'static str, value: Option<u64>) {
        match value {
            Some(value) => self.uint(key, value),
            None => self.null(key),
        }
    }

    #[inline]
    pub(crate) fn bool(&mut self, key: &'static str, value: bool) {
        self.key(key);
        let text: &[u8] = if value { b"true" } else { b"false" };
        self.out.extend_from_slice(text);
    }

    /// Any value, through serde_json; false when it cannot be written.
    pub(crate) fn value(&mut self, key: &'static str, value: &impl Serialize) -> bool {
        self.key(key);
        serde_json::to_writer(&mut *self.out, value).is_ok()
    }

    pub(crate) fn close(self) {
        self.out.push(b'}');
    }
}

/// `value` as a JSON string.
#[inline]
fn string(out: &mut Vec<u8>, value: &str) {
    // No early exit: the whole string in wide steps.
    let escaped = value.bytes().fold(false, |any, b| {
        any | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if escaped {
        serde_json::to_writer(out, value).expect("a string always serializes into memory");
    } else {
        out.reserve(value.len() + 2);
        out.push(b'"');
        out.extend_from_slice(value.as_bytes());
        out.push(b'"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_written_as_serde_json_writes_them() {
        let strings = [
            "",
            "plain",
            "dsc_0192f0a1-7b7e-7000-8000-000000000000",
            "a \"quoted\" \\ back",
            "back\\slash",
            "new\nline",
            "tab\tnew\nline\r\u{8}\u{c}\u{1}\u{1f}",
            "\u{7f} é € 😀",
        ];
        for value in strings {
            let mut out = Vec::new();
            let mut object = JsonObject::open(&mut out);
            object.str("s", value);
            object.opt_str("n", None);
            object.opt_str("o", Some(value));
            object.str_if("skipped", None);
            object.str_if("i", Some(value));
            object.close();
            let expected = serde_json::json!({"s": value, "n": null, "o": value, "i": value});
            assert_eq!(out, serde_json::to_vec(&expected).unwrap(), "{value:?}");
        }
        for number in [0, 7, 10, 99, 1_000_000, u32::MAX as u64, u64::MAX] {
            let mut out = Vec::new();
            let mut object = JsonObject::open(&mut out);
            object.uint("u", number);
            object.opt_uint("o", Some(number));
            object.opt_uint("n", None);
            object.uint_if("skipped", None);
            object.bool("t", true);
            object.bool("f", false);
            assert!(object.value("v", &serde_json::json!({"a": [1.5, null]})));
            object.close();
            let expected = serde_json::json!({
                "u": number, "o": number, "n": null, "t": true, "f": false,
                "v": {"a": [1.5, null]},
            });
            assert_eq!(out, serde_json::to_vec(&expected).unwrap(), "{number}");
        }
        let mut out = Vec::new();
        JsonObject::open(&mut out).close();
        assert_eq!(out, b"{}");
    }
}
