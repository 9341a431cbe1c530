//! A scanner for a line the way `discuss` writes one: a JSON object
//! without whitespace, its values strings, integers, `true`, `false` or
//! `null`. What it reads, it reads exactly as serde does; anything it is
//! not sure of, it does not read (`None`), and serde reads the line. The
//! index's peek (`ledger/file/cache/peek.rs`) and the record's typed pass
//! (`typed/flat.rs`) are made of it.

use std::borrow::Cow;

/// Sets a field seen for the first time; `None` for the second (serde
/// refuses a field twice, even `null` twice).
pub(crate) fn once<T>(field: &mut Option<T>, value: T) -> Option<()> {
    field.is_none().then(|| *field = Some(value))
}

thread_local! {
    /// Where a string with escapes is decoded (`Scan::string`).
    static DECODED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Digits of an integer a body may have to be skipped here: `Value` reads
/// a longer one as a float, which may be out of range (serde decides).
const VALUE_DIGITS: usize = 300;

/// Digits whose value always fits a `u64` and its negative an `i64`:
/// any 18 (under 10^18).
const SURE_DIGITS: usize = 18;

/// Where the first `"` or `\` of `bytes` (the rest of a line) is. Most
/// strings of a line are short (keys, ids, kinds, stamps): memchr's
/// `memchr2`, which picks its routine through a pointer at each call and
/// sets it up, cost more than the search on them (a sixth of a first
/// list's instructions). The SSE2 searcher, there on every x86-64, is
/// inlined here and looks at 16 bytes at a time from the first.
#[inline]
fn quote_or_backslash(bytes: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(searcher) = memchr::arch::x86_64::sse2::memchr::Two::new(b'"', b'\\') {
        return searcher.find(bytes);
    }
    memchr::memchr2(b'"', b'\\', bytes)
}

/// Where the first `"` or `\` of a block of 16 bytes is: SSE2's
/// compares on x86-64 (every x86-64 has them), eight bytes at a time
/// elsewhere.
#[inline]
fn first_quote_or_backslash_of(block: &[u8; 16]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    return first_quote_or_backslash_sse2(block);
    #[cfg(not(target_arch = "x86_64"))]
    return first_quote_or_backslash_swar(block);
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn first_quote_or_backslash_sse2(block: &[u8; 16]) -> Option<usize> {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of x86-64, and the load reads `block`'s 16
    // bytes, unaligned.
    let mask = unsafe {
        let bytes = _mm_loadu_si128(block.as_ptr().cast());
        let quotes = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
        let backslashes = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
        _mm_movemask_epi8(_mm_or_si128(quotes, backslashes))
    };
    (mask != 0).then(|| mask.trailing_zeros() as usize)
}

/// Eight bytes at a time: a byte equal to the one looked for is a zero
/// after `^`, and `(x - 0x01..) & !x & 0x80..` marks the lowest zero byte
/// of a word exactly (a borrow can only mark bytes above it).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline]
fn first_quote_or_backslash_swar(block: &[u8; 16]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    for (half, word) in block.chunks_exact(8).enumerate() {
        let word = u64::from_le_bytes(word.try_into().ok()?);
        let found = zero(word ^ (ONES * u64::from(b'"'))) | zero(word ^ (ONES * u64::from(b'\\')));
        if found != 0 {
            return Some(half * 8 + found.trailing_zeros() as usize / 8);
        }
    }
    None
}

/// The byte a one-letter escape stands for (`\n`: a newline); `None` for
/// any other letter, `u` too (four hex digits follow it).
#[inline]
fn escaped_byte(letter: u8) -> Option<u8> {
    match letter {
        b'"' | b'\\' | b'/' => Some(letter),
        b'b' => Some(0x08),
        b'f' => Some(0x0c),
        b'n' => Some(b'\n'),
        b'r' => Some(b'\r'),
        b't' => Some(b'\t'),
        _ => None,
    }
}

/// A position in a line.
pub(crate) struct Scan<'a> {
    bytes: &'a [u8],
    /// The line as text, when it is known to be UTF-8 (ASCII, or checked
    /// whole): its strings are then slices of it, not each checked again.
    text: Option<&'a str>,
    at: usize,
}

impl<'a> Scan<'a> {
    /// A scan of `line` past the brace that opens its object, for a reader
    /// of most of its strings (a record's typed pass): a line that is not
    /// ASCII is checked for UTF-8 once, whole. `None` for a line with a
    /// byte below a space: JSON allows none in a string, and whitespace is
    /// left to serde. (Like serde, only the strings read must be UTF-8.)
    #[inline]
    pub(crate) fn object(line: &'a [u8]) -> Option<Scan<'a>> {
        Scan::open(line, true)
    }

    /// `object` for a reader of a few short strings (the index's peek):
    /// a line that is not ASCII has only the strings read checked.
    #[inline]
    pub(crate) fn object_read_in_part(line: &'a [u8]) -> Option<Scan<'a>> {
        Scan::open(line, false)
    }

    /// `object` for text already known to be UTF-8 (a message's payload).
    #[inline]
    pub(crate) fn object_of_text(text: &'a str) -> Option<Scan<'a>> {
        let line = text.as_bytes();
        if line.iter().fold(u8::MAX, |low, &b| low.min(b)) < 0x20 {
            return None;
        }
        Scan::past_brace(line, Some(text))
    }

    #[inline]
    fn open(line: &'a [u8], check_whole: bool) -> Option<Scan<'a>> {
        // The lowest and highest byte in one pass the compiler vectorizes:
        // a line of ASCII (most) is then text without the byte-by-byte
        // UTF-8 check, which was 6 % of a rebuild.
        let (lowest, highest) = line
            .iter()
            .fold((u8::MAX, 0u8), |(low, high), &b| (low.min(b), high.max(b)));
        if lowest < 0x20 {
            return None;
        }
        let text = if highest < 0x80 {
            // SAFETY: every byte is below 0x80, and ASCII is UTF-8.
            Some(unsafe { std::str::from_utf8_unchecked(line) })
        } else if check_whole {
            std::str::from_utf8(line).ok()
        } else {
            None
        };
        Scan::past_brace(line, text)
    }

    #[inline]
    fn past_brace(line: &'a [u8], text: Option<&'a str>) -> Option<Scan<'a>> {
        let mut scan = Scan {
            bytes: line,
            text,
            at: 0,
        };
        scan.byte(b'{')?;
        Some(scan)
    }

    /// The next key (without escapes), and the colon after it.
    #[inline]
    pub(crate) fn key(&mut self) -> Option<&'a [u8]> {
        let key = self.plain_bytes()?;
        self.byte(b':')?;
        Some(key)
    }

    #[inline]
    fn at_end(&self) -> bool {
        self.at == self.bytes.len()
    }

    #[inline]
    fn next(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    #[inline]
    fn byte(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    #[inline]
    fn literal(&mut self, word: &str) -> bool {
        let found = self.bytes[self.at..].starts_with(word.as_bytes());
        if found {
            self.at += word.len();
        }
        found
    }

    /// After a field: `Some(false)` at a comma (a field follows),
    /// `Some(true)` at the brace that closes the object and ends the line.
    #[inline]
    pub(crate) fn object_ends(&mut self) -> Option<bool> {
        match self.next()? {
            b',' => Some(false),
            b'}' if self.at_end() => Some(true),
            _ => None,
        }
    }

    /// The bytes of a string without escapes.
    #[inline]
    fn plain_bytes(&mut self) -> Option<&'a [u8]> {
        self.byte(b'"')?;
        let rest = &self.bytes[self.at..];
        let end = quote_or_backslash(rest)?;
        if rest[end] != b'"' {
            return None;
        }
        self.at += end + 1;
        Some(&rest[..end])
    }

    /// A string without escapes, which is then its own text (if UTF-8).
    #[inline]
    pub(crate) fn plain_string(&mut self) -> Option<&'a str> {
        let from = self.at + 1;
        let bytes = self.plain_bytes()?;
        self.text_of(from, from + bytes.len())
    }

    /// The bytes from `from` to `to` as text, if UTF-8: a slice of the
    /// line's text when there is one (they start and end at ASCII
    /// bytes, so at its characters' bounds). Checking each run between
    /// escapes is checking the string whole, as serde does: an escape
    /// decodes to whole characters.
    #[inline]
    fn text_of(&self, from: usize, to: usize) -> Option<&'a str> {
        match self.text {
            Some(text) => text.get(from..to),
            None => std::str::from_utf8(&self.bytes[from..to]).ok(),
        }
    }

    /// A string, its escapes decoded as serde decodes them: borrowed from
    /// the line when it has none. An escaped surrogate is left to serde.
    #[inline]
    pub(crate) fn string(&mut self) -> Option<Cow<'a, str>> {
        self.byte(b'"')?;
        let bytes = self.bytes;
        let first = self.at + quote_or_backslash(&bytes[self.at..])?;
        if bytes[first] == b'"' {
            let text = self.text_of(self.at, first)?;
            self.at = first + 1;
            return Some(Cow::Borrowed(text));
        }
        // Decoded into this thread's scratch, then copied once into a
        // string of its own size: grown as it was decoded, a payload (an
        // escape in its first bytes) was reallocated several times.
        DECODED.with_borrow_mut(|decoded| {
            decoded.clear();
            let string = self.decode(decoded, first).and_then(|()| match self.text {
                // SAFETY: `decode` leaves in `decoded` whole runs of the
                // line between escapes (each starts and ends at an ASCII
                // byte, so at a character's bound), here of its text, and
                // the UTF-8 of the characters the escapes stand for.
                Some(_) => Some(unsafe { String::from_utf8_unchecked(decoded.to_vec()) }),
                // Checked whole, as serde checks each run: no character
                // spans an escape.
                None => String::from_utf8(decoded.to_vec()).ok(),
            });
            // A huge string is not kept hold of.
            if decoded.capacity() > 1 << 20 {
                *decoded = Vec::new();
            }
            Some(Cow::Owned(string?))
        })
    }

    /// The rest of a string whose first escape is at `first`, decoded
    /// onto `decoded`. Each run between escapes is copied 16 bytes at a
    /// time while the next quote or backslash is looked for in them, not
    /// found first and copied after (a call each): a payload has an
    /// escape every twenty bytes or so.
    #[inline]
    fn decode(&mut self, decoded: &mut Vec<u8>, first: usize) -> Option<()> {
        let bytes = self.bytes;
        // The first run, up to the first escape, is known already.
        decoded.extend_from_slice(&bytes[self.at..first]);
        let mut end = first;
        loop {
            if bytes[end] == b'"' {
                self.at = end + 1;
                return Some(());
            }
            self.at = end + 1;
            self.escape_into(decoded)?;
            // The run from here to the next quote or backslash.
            let mut at = self.at;
            end = loop {
                let Some(block) = bytes.get(at..at + 16) else {
                    let rest = &bytes[at..];
                    let found = quote_or_backslash(rest)?;
                    decoded.extend_from_slice(&rest[..found]);
                    break at + found;
                };
                let block: &[u8; 16] = block.try_into().ok()?;
                decoded.extend_from_slice(block);
                match first_quote_or_backslash_of(block) {
                    None => at += 16,
                    Some(found) => {
                        decoded.truncate(decoded.len() - 16 + found);
                        break at + found;
                    }
                }
            };
        }
    }

    /// The escape after a backslash (`self.at` is past it) decoded onto
    /// `decoded`: `None` for one serde refuses, or an escaped surrogate.
    #[inline]
    fn escape_into(&mut self, decoded: &mut Vec<u8>) -> Option<()> {
        let letter = *self.bytes.get(self.at)?;
        self.at += 1;
        if let Some(byte) = escaped_byte(letter) {
            decoded.push(byte);
            return Some(());
        }
        if letter != b'u' {
            return None;
        }
        // None for a surrogate, paired or not.
        let c = char::from_u32(self.hex_unit(self.at)?)?;
        self.at += 4;
        decoded.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        Some(())
    }

    /// The code unit of the four hex digits of a `\u` escape at `at`.
    #[inline]
    fn hex_unit(&self, at: usize) -> Option<u32> {
        let hex = self.bytes.get(at..at + 4)?;
        hex.iter()
            .try_fold(0, |unit, &h| Some(unit * 16 + char::from(h).to_digit(16)?))
    }

    /// A string read into one of its own.
    #[inline]
    pub(crate) fn owned(&mut self) -> Option<String> {
        self.string().map(Cow::into_owned)
    }

    /// `null`, or what `read` reads.
    #[inline]
    pub(crate) fn nullable<T>(
        &mut self,
        read: impl FnOnce(&mut Scan<'a>) -> Option<T>,
    ) -> Option<Option<T>> {
        if self.literal("null") {
            return Some(None);
        }
        read(self).map(Some)
    }

    /// The digits of an integer, as JSON writes them (no leading zero),
    /// and their value when there are few enough that it fits a `u64`
    /// unchecked (`SURE_DIGITS`); `None` when a fraction or an exponent
    /// follows (serde reads a float there, which is no integer).
    #[inline]
    fn digits(&mut self) -> Option<(&'a [u8], Option<u64>)> {
        let bytes = self.bytes;
        let from = self.at;
        // Counted and added up in one loop: a stamp's 13 digits were a
        // count, then a checked sum (300 instructions a stamp).
        let mut value = 0u64;
        let mut at = from;
        while let Some(&b) = bytes.get(at) {
            let digit = b.wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            value = value.wrapping_mul(10).wrapping_add(u64::from(digit));
            at += 1;
        }
        let digits = &bytes[from..at];
        if digits.is_empty() || (digits[0] == b'0' && digits.len() > 1) {
            return None;
        }
        if matches!(bytes.get(at), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        self.at = at;
        Some((digits, (digits.len() <= SURE_DIGITS).then_some(value)))
    }

    /// A non-negative integer that fits a `u64`.
    #[inline]
    pub(crate) fn unsigned(&mut self) -> Option<u64> {
        match self.digits()? {
            (_, Some(value)) => Some(value),
            (digits, None) => digits.iter().try_fold(0u64, |n, &d| {
                n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
            }),
        }
    }

    /// An integer that fits an `i64`; not `-0`, which serde reads as a
    /// float.
    #[inline]
    pub(crate) fn signed(&mut self) -> Option<i64> {
        if !self.literal("-") {
            return i64::try_from(self.unsigned()?).ok();
        }
        match self.digits()? {
            (b"0", _) => None,
            // Under 10^18: its negative fits.
            (_, Some(value)) => Some(-(value as i64)),
            (digits, None) => digits.iter().try_fold(0i64, |n, &d| {
                n.checked_mul(10)?.checked_sub(i64::from(d - b'0'))
            }),
        }
    }

    /// `true` or `false`.
    #[inline]
    pub(crate) fn boolean(&mut self) -> Option<bool> {
        if self.literal("true") {
            Some(true)
        } else if self.literal("false") {
            Some(false)
        } else {
            None
        }
    }

    /// The bytes of an object or an array, brackets and strings matched
    /// (not checked: serde reads them).
    pub(crate) fn nested(&mut self) -> Option<&'a [u8]> {
        let bytes = self.bytes;
        let from = self.at;
        if !matches!(bytes.get(from), Some(b'{' | b'[')) {
            return None;
        }
        let mut depth = 0usize;
        let mut at = from;
        loop {
            match *bytes.get(at)? {
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        self.at = at + 1;
                        return Some(&bytes[from..=at]);
                    }
                }
                b'"' => {
                    self.at = at;
                    self.skip_value()?;
                    at = self.at;
                    continue;
                }
                _ => {}
            }
            at += 1;
        }
    }

    /// The value of a key that is not read: a key serde reads must be
    /// UTF-8, even one it ignores.
    #[inline]
    pub(crate) fn skip_value_of(&mut self, key: &[u8]) -> Option<()> {
        if !key.is_ascii() {
            std::str::from_utf8(key).ok()?;
        }
        self.skip_value()
    }

    /// A value that is not kept: a string (escapes checked as serde
    /// checks them), an integer, `true`, `false` or `null`. An object, an
    /// array or a float is left to serde.
    #[inline]
    fn skip_value(&mut self) -> Option<()> {
        self.skip_scalar(false)
    }

    /// `skip_value`; `as_value`: as `serde_json::Value` would read it,
    /// which refuses an escaped surrogate left alone (here: any escaped
    /// surrogate, left to serde) and reads an integer too long for a `u64`
    /// as a float (here: up to 300 digits, far from its range's end).
    #[inline]
    fn skip_scalar(&mut self, as_value: bool) -> Option<()> {
        let bytes = self.bytes;
        match *bytes.get(self.at)? {
            b'"' => {
                self.at += 1;
                loop {
                    let end = self.at + quote_or_backslash(&bytes[self.at..])?;
                    self.at = end + 1;
                    if bytes[end] == b'"' {
                        return Some(());
                    }
                    let letter = *bytes.get(self.at)?;
                    if escaped_byte(letter).is_some() {
                        self.at += 1;
                    } else if letter == b'u' {
                        let unit = self.hex_unit(self.at + 1)?;
                        if as_value && (0xd800..0xe000).contains(&unit) {
                            return None;
                        }
                        self.at += 5;
                    } else {
                        return None;
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                self.at += usize::from(bytes[self.at] == b'-');
                self.digits()
                    .filter(|(d, _)| !as_value || d.len() <= VALUE_DIGITS)
                    .map(drop)
            }
            _ => ["true", "false", "null"]
                .iter()
                .any(|word| self.literal(word))
                .then_some(()),
        }
    }

    /// The brace that opens a nested object.
    #[inline]
    pub(crate) fn nested_object(&mut self) -> Option<()> {
        self.byte(b'{')
    }

    /// The bracket that opens an array: `Some(true)` when a member
    /// follows, `Some(false)` past the one that closes it at once (`[]`).
    #[inline]
    pub(crate) fn array_opens(&mut self) -> Option<bool> {
        self.byte(b'[')?;
        let empty = self.bytes.get(self.at) == Some(&b']');
        self.at += usize::from(empty);
        Some(!empty)
    }

    /// After a member of a nested object or array: `Some(true)` at a
    /// comma, `Some(false)` at the bracket that closes it.
    #[inline]
    pub(crate) fn member_follows(&mut self, close: u8) -> Option<bool> {
        match self.next()? {
            b',' => Some(true),
            b if b == close => Some(false),
            _ => None,
        }
    }

    /// A value `serde_json::Value` takes, skipped: objects and arrays at
    /// most `depth` deep (far under serde's recursion limit), keys without
    /// escapes, strings, integers of up to 300 digits (`Value` reads a
    /// longer one as a float, which may be out of range), `true`, `false`
    /// and `null`. `None` for anything else, a float or an escaped
    /// surrogate among it, which serde is left to judge.
    pub(crate) fn skip_json(&mut self, depth: u32) -> Option<()> {
        let close = match *self.bytes.get(self.at)? {
            b'{' => b'}',
            b'[' => b']',
            _ => return self.skip_scalar(true),
        };
        let depth = depth.checked_sub(1)?;
        self.at += 1;
        if self.bytes.get(self.at) == Some(&close) {
            self.at += 1;
            return Some(());
        }
        loop {
            if close == b'}' {
                self.key()?;
            }
            self.skip_json(depth)?;
            if !self.member_follows(close)? {
                return Some(());
            }
        }
    }
}

/// What the tests of a scanner share: the corpus, and edits of its lines.
#[cfg(test)]
pub(crate) mod testing {
    /// Every line of the fuzz corpus and `extra`, sorted, each once.
    pub(crate) fn corpus_lines(extra: &[&str]) -> Vec<Vec<u8>> {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/replay");
        let mut lines: Vec<Vec<u8>> = extra.iter().map(|line| line.as_bytes().to_vec()).collect();
        for entry in std::fs::read_dir(folder).unwrap() {
            let ledger = std::fs::read(entry.unwrap().path()).unwrap();
            lines.extend(ledger.split(|&b| b == b'\n').map(<[u8]>::to_vec));
        }
        lines.sort();
        lines.dedup();
        lines
    }

    /// Asserts `agrees` of the first lines shorter than 400 bytes, and of
    /// each of them with one byte changed at every place to each byte that
    /// matters to a scanner: 300 lines (over 100,000 edits) with
    /// `DISCUSS_EDITED_LINES=300`, as CI sets; 60 by default, so that
    /// `cargo test` takes seconds, not a quarter of a minute.
    pub(crate) fn assert_agrees_under_edits(lines: &[Vec<u8>], agrees: impl Fn(&[u8]) -> bool) {
        let bytes = b"\"\\,:{}[]-0123456789.eEuntrfalse \x01\xc3\xff";
        let taken: usize = std::env::var("DISCUSS_EDITED_LINES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(60);
        let mut edits = 0;
        for line in lines.iter().filter(|line| line.len() < 400).take(taken) {
            assert!(agrees(line), "{}", String::from_utf8_lossy(line));
            for at in 0..line.len() {
                for &b in bytes {
                    let mut edited = line.clone();
                    edited[at] = b;
                    assert!(agrees(&edited), "{}", String::from_utf8_lossy(&edited));
                    edits += 1;
                }
            }
        }
        // As many edits a line as the 300 lines' 100,000: enough lines, and
        // long enough, were there to take.
        assert!(3 * edits > 1_000 * taken, "{edits} edits of {taken} lines");
    }
}

#[cfg(test)]
mod tests;
