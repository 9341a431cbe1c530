//! The scanner against serde: integers, strings with escapes, the block
//! searchers, and every line of the corpus edited.

use super::*;

/// Integers of every length around where a sum may overflow, at the
/// edges of `u64` and `i64`, and not quite integers: read as Rust
/// reads the same digits, or refused where JSON has no integer.
#[test]
fn integers_are_read_to_their_last_digit_or_refused() {
    let mut texts: Vec<String> = [
        "0",
        "7",
        "-7",
        "-0",
        "00",
        "01",
        "-01",
        "1.5",
        "1e3",
        "1E3",
        "-",
        "",
        "x",
        "--1",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "-18446744073709551615",
    ]
    .map(String::from)
    .to_vec();
    for len in 1..=22 {
        for lead in ["1", "9"] {
            let digits = format!("{lead}{}", "9".repeat(len - 1));
            texts.push(format!("-{digits}"));
            texts.push(digits);
        }
        texts.push(format!("1{}", "0".repeat(len - 1)));
        // Every digit in every place, and a stop after any of them.
        let mixed: String = (0..len)
            .map(|i| char::from(b'1' + ((i * 7 + len) % 9) as u8))
            .collect();
        for stop in [",", "x", "/", ":", "a", "\u{7f}", "\u{e9}"] {
            texts.push(format!("{mixed}{stop}"));
            texts.push(format!("-{}0{stop}5", &mixed[..len / 2]));
        }
        texts.push(mixed);
    }
    for text in &texts {
        let line = format!("{{\"n\":{text}}}");
        // The scanner reads an optional minus and the digits after
        // it; what follows is the caller's, but for a fraction or an
        // exponent, which make the number no integer.
        let sign = usize::from(text.starts_with('-'));
        let digits_end = sign + text[sign..].bytes().take_while(u8::is_ascii_digit).count();
        let (number, rest) = text.split_at(digits_end);
        let digits = &number[sign..];
        let is_integer = !digits.is_empty()
            && (digits == "0" || !digits.starts_with('0'))
            && !rest.starts_with(['.', 'e', 'E']);
        let read = |reader: fn(&mut Scan<'_>) -> Option<i128>| {
            let mut scan = Scan::object(line.as_bytes()).unwrap();
            scan.key().unwrap();
            reader(&mut scan)
        };
        let unsigned = read(|s| s.unsigned().map(i128::from));
        let expected = is_integer.then(|| number.parse::<u64>().ok()).flatten();
        assert_eq!(unsigned, expected.map(i128::from), "unsigned {text}");
        let signed = read(|s| s.signed().map(i128::from));
        let expected = (is_integer && number != "-0")
            .then(|| number.parse::<i64>().ok())
            .flatten();
        assert_eq!(signed, expected.map(i128::from), "signed {text}");
    }
    assert!(texts.len() > 400, "{}", texts.len());
}

/// Strings with escapes of every kind after runs of every length up
/// to past two blocks, of ASCII and of wider characters, at the
/// line's end and far from it, and not text: decoded as serde
/// decodes them, or refused where serde refuses them.
#[test]
fn strings_with_escapes_are_decoded_as_serde_decodes_them() {
    let escapes = [
        r#"\""#, r"\\", r"\/", r"\b", r"\f", r"\n", r"\r", r"\t", r"\u00e9", r"\u2713", r"\u0000",
        r"\uD800", r"\q", r"\u12", r"\uzzzz",
    ];
    let runs = ["", "a", "é", "✓", "x\u{1F600}"];
    let mut checked = 0;
    for len in 0..40 {
        for run in runs {
            let run = run.repeat(len);
            for escape in escapes {
                for tail in ["", r"plain after", r"\n", r#"\"\"\""#] {
                    let string = format!(r#""{run}{escape}{run}{tail}""#);
                    let expected = serde_json::from_str::<String>(&string).ok();
                    for (before, after) in [("", ""), ("", r#","x":"#), (r#""k":1,"#, "")] {
                        let line = format!(r#"{{{before}"s":{string}{after}}}"#);
                        let mut scan = Scan::object(line.as_bytes()).unwrap();
                        if !before.is_empty() {
                            scan.key().unwrap();
                            scan.unsigned().unwrap();
                            scan.object_ends().unwrap();
                        }
                        scan.key().unwrap();
                        let read = scan.string().map(|s| s.into_owned());
                        // An escaped surrogate is left to serde.
                        if escape != r"\uD800" {
                            assert_eq!(read, expected, "{line}");
                        } else {
                            assert_eq!(read, None, "{line}");
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 30_000, "{checked}");
    // Not UTF-8 in a run, before or after an escape, near the end or
    // not: refused, as serde refuses it.
    for len in [0, 3, 17, 40] {
        for at_start in [true, false] {
            let mut line = br#"{"s":""#.to_vec();
            let run = vec![b'a'; len];
            let bad: &[u8] = &[0xff];
            line.extend_from_slice(&run);
            line.extend_from_slice(if at_start { bad } else { b"\\n" });
            line.extend_from_slice(&run);
            line.extend_from_slice(if at_start { b"\\n" } else { bad });
            line.extend_from_slice(&run);
            line.extend_from_slice(br#""}"#);
            let mut scan = Scan::object(&line).unwrap();
            scan.key().unwrap();
            assert_eq!(scan.string(), None);
        }
    }
}

/// Strings of every length up to past the searcher's 64-byte steps,
/// with a quote, a backslash or neither at every place, among bytes that are
/// near them (`!`, `#`, `[`, `]`), high ones and a zero: the place
/// found is memchr's.
#[test]
fn the_first_quote_or_backslash_is_where_memchr_finds_it() {
    let fillers = [b'a', b'!', b'#', b'[', b']', 0x00, 0x80, 0xa2, 0xdc, 0xff];
    let mut checked = 0;
    for len in 0..140 {
        for &filler in &fillers {
            let plain = vec![filler; len];
            assert_eq!(quote_or_backslash(&plain), None);
            if let Ok(block) = <&[u8; 16]>::try_from(&plain[..]) {
                assert_eq!(first_quote_or_backslash_of(block), None);
                assert_eq!(first_quote_or_backslash_swar(block), None);
            }
            for at in 0..len {
                for mark in [b'"', b'\\'] {
                    let mut bytes = plain.clone();
                    bytes[at] = mark;
                    // A second mark later must not be the one found.
                    if at + 3 < len {
                        bytes[at + 3] = b'"';
                    }
                    let expected = memchr::memchr2(b'"', b'\\', &bytes);
                    assert_eq!(expected, Some(at));
                    assert_eq!(quote_or_backslash(&bytes), expected, "{bytes:?}");
                    if let Ok(block) = <&[u8; 16]>::try_from(&bytes[..]) {
                        assert_eq!(first_quote_or_backslash_swar(block), expected);
                        #[cfg(target_arch = "x86_64")]
                        assert_eq!(first_quote_or_backslash_sse2(block), expected);
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 60_000, "{checked}");
}
