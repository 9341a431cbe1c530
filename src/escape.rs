//! Untrusted text made safe for a terminal. A leaf: errors and the output
//! layer both use it.

/// Text from the ledger (a reason, a detail, a body) made safe for a
/// terminal: control characters, escape sequences and line breaks shown
/// as escapes (`\u{1b}`, `\n`), so no record can move the cursor, recolour
/// the screen or forge lines of output. With `keep_lines`, line breaks
/// and tabs stay (a Markdown body).
pub(crate) fn printable(text: &str, keep_lines: bool) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && !(keep_lines && matches!(c, '\n' | '\t'));
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
