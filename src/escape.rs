//! Untrusted text made safe for a terminal. A leaf: errors and the output
//! layer both use it.

/// Text from the ledger (a reason, a detail, a body) made safe for a
/// terminal: control characters (C0 and C1), escape sequences, line
/// breaks and bidirectional overrides shown as escapes (`\u{1b}`, `\n`,
/// `\u{9b}`, `\u{202e}`), so no record can move the cursor, recolour the
/// screen, forge lines of output or reorder what is read. With `keep_lines`, line breaks
/// and tabs stay (a Markdown body).
pub(crate) fn printable(text: &str, keep_lines: bool) -> std::borrow::Cow<'_, str> {
    // Controls are C0, DEL and C1 (U+0080–U+009F: CSI, OSC, ST…); the
    // bidirectional overrides and isolates reorder what a terminal shows.
    let bidi = |c: char| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    let unsafe_char =
        |c: char| (c.is_control() && !(keep_lines && matches!(c, '\n' | '\t'))) || bidi(c);
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut safe = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            safe.extend(c.escape_default());
        } else {
            safe.push(c);
        }
    }
    std::borrow::Cow::Owned(safe)
}
