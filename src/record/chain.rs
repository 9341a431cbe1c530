//! Chained lines (`docs/ledger-format.md`, "Chained lines"): every line
//! `discuss` writes ends with `"prev":"sha256:HEX"`, the SHA-256 of the
//! complete previous line, its `\n` included (of no bytes for line 1). A
//! line edited, removed, inserted or moved breaks the next line's `prev`.

use sha2::{Digest as _, Sha256};

/// The SHA-256 of one complete line.
pub type Digest = [u8; 32];

/// What `prev` names before line 1: the digest of no bytes.
pub fn before_first_line() -> Digest {
    Sha256::digest([]).into()
}

/// The digest of a line given without its `\n` (which it covers).
pub fn digest_of(line: &[u8]) -> Digest {
    let mut hasher = Sha256::new();
    hasher.update(line);
    hasher.update(b"\n");
    hasher.finalize().into()
}

/// Lowercase hex, as `prev`, seals and `verify` write a digest (and a
/// seal its key and signature).
pub fn hex(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(2 * bytes.len());
    for byte in bytes {
        text.push(char::from(HEX[usize::from(byte >> 4)]));
        text.push(char::from(HEX[usize::from(byte & 15)]));
    }
    text
}

/// A digest written as 64 lowercase hex digits; `None` for anything else.
pub fn parse_hex(text: &[u8]) -> Option<Digest> {
    parse_hex_bytes(text)
}

/// `N` bytes written as `2 * N` lowercase hex digits.
pub fn parse_hex_bytes<const N: usize>(text: &[u8]) -> Option<[u8; N]> {
    if text.len() != 2 * N {
        return None;
    }
    let mut bytes = [0u8; N];
    for (byte, pair) in bytes.iter_mut().zip(text.chunks_exact(2)) {
        *byte = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Some(bytes)
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn nibble(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        _ => None,
    }
}

/// What a line says of the line before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prev {
    /// No `prev`: a line of an older ledger, or of another tool.
    Unchained,
    /// `"prev":"sha256:HEX"`.
    Names(Digest),
    /// A `prev` that is not a digest written as `discuss` writes one: it
    /// matches no line.
    Malformed,
}

/// The end of every line `discuss` writes: `,"prev":"sha256:` (16 bytes),
/// 64 hex digits, `"}`.
const TAIL: usize = 16 + 64 + 2;

/// The `prev` of a line (without its `\n`). A line written by `discuss`
/// ends with it and is read without parsing; another line is parsed only
/// when it holds `"prev"` at all (a top-level member named so can be no
/// other bytes: in a string, its quotes would be escaped).
pub fn prev_of(line: &[u8]) -> Prev {
    if line.len() > TAIL {
        let tail = &line[line.len() - TAIL..];
        if tail.starts_with(br#","prev":"sha256:"#)
            && tail.ends_with(br#""}"#)
            && let Some(digest) = parse_hex(&tail[16..80])
        {
            return Prev::Names(digest);
        }
    }
    if memchr::memmem::find(line, br#""prev""#).is_none() {
        return Prev::Unchained;
    }
    let Ok(serde_json::Value::Object(fields)) = serde_json::from_slice(line) else {
        // Not a JSON object: the line is a finding of its own.
        return Prev::Unchained;
    };
    match fields.get("prev") {
        None => Prev::Unchained,
        Some(serde_json::Value::String(text)) => text
            .strip_prefix("sha256:")
            .and_then(|hex| parse_hex(hex.as_bytes()))
            .map_or(Prev::Malformed, Prev::Names),
        Some(_) => Prev::Malformed,
    }
}

/// Ends `lines`, whose last line is a JSON object just written (no `\n`
/// yet, it starts at `start`), with `"prev"` naming `prev`, and its `\n`;
/// `prev` becomes that line's digest.
pub fn chain_last_line(lines: &mut String, start: usize, prev: &mut Digest) {
    debug_assert!(lines.ends_with('}'));
    lines.pop();
    lines.push_str(r#","prev":"sha256:"#);
    lines.push_str(&hex(prev));
    lines.push_str("\"}");
    *prev = digest_of(&lines.as_bytes()[start..]);
    lines.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_of_no_bytes_is_sha256s() {
        assert_eq!(
            hex(&before_first_line()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        // A line's digest covers its newline.
        assert_eq!(
            hex(&digest_of(b"")),
            "01ba4719c80b6fe911b091a7c05124b64eeece964e09c058ef8f9805daca546b"
        );
    }

    #[test]
    fn hex_round_trips_and_refuses_what_discuss_does_not_write() {
        let digest = digest_of(b"{}");
        assert_eq!(parse_hex(hex(&digest).as_bytes()), Some(digest));
        assert_eq!(parse_hex(hex(&digest).to_uppercase().as_bytes()), None);
        assert_eq!(parse_hex(b"00"), None);
    }

    #[test]
    fn prev_is_read_where_discuss_writes_it_and_anywhere_else() {
        let digest = digest_of(b"x");
        let mut lines = String::from(r#"{"v":1}"#);
        let mut prev = digest;
        chain_last_line(&mut lines, 0, &mut prev);
        let line = lines.trim_end_matches('\n').as_bytes();
        assert_eq!(prev_of(line), Prev::Names(digest));
        assert_eq!(prev, digest_of(line));
        let moved = format!(r#"{{"prev":"sha256:{}","v":1}}"#, hex(&digest));
        assert_eq!(prev_of(moved.as_bytes()), Prev::Names(digest));
        assert_eq!(prev_of(br#"{"v":1}"#), Prev::Unchained);
        assert_eq!(prev_of(br#"{"v":1,"reason":"prev"}"#), Prev::Unchained);
        assert_eq!(
            prev_of(br#"{"usage":{"prev":"sha256:00"}}"#),
            Prev::Unchained
        );
        assert_eq!(prev_of(br#"{"v":1,"prev":"sha256:00"}"#), Prev::Malformed);
        assert_eq!(prev_of(br#"{"v":1,"prev":7}"#), Prev::Malformed);
        assert_eq!(prev_of(b"not json \"prev\""), Prev::Unchained);
    }
}
