//! Text for people: times, durations, counts, wrapping, widths, and the
//! escaping of untrusted text. No colour here (see `Style`).

use crate::clock::format_ms;
pub(crate) use crate::escape::printable;
use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

/// "in 41s" / "3m ago" relative to `now_ms`.
pub(crate) fn relative(ms: i64, now_ms: i64) -> String {
    // i128: times come from the ledger, which any tool may have written.
    let delta = i128::from(ms) - i128::from(now_ms);
    let secs = delta.unsigned_abs() / 1000;
    if secs == 0 {
        // Within the second: "in 0s" or "0s ago" would only tell noise.
        return "now".to_owned();
    }
    let span = if secs < 60 {
        format!("{secs}s")
    } else if secs < 3600 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else if secs < 86_400 {
        format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60)
    } else {
        format!("{}d{:02}h", secs / 86_400, (secs % 86_400) / 3600)
    };
    if delta >= 0 {
        format!("in {span}")
    } else {
        format!("{span} ago")
    }
}

/// A duration given in ms, exactly: "60s", "1.999s", "1.5s".
pub(crate) fn duration(ms: i64) -> String {
    if ms % 1000 == 0 {
        return format!("{}s", ms / 1000);
    }
    let text = format!("{:.3}", ms as f64 / 1000.0);
    format!("{}s", text.trim_end_matches('0'))
}

/// "1 discussion", "2 discussions": `n` and the word for it.
pub(crate) fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The width to wrap text for: the terminal's, when stdout is one (or
/// `COLUMNS` says); none in a pipe or a file, where lines stay whole.
pub(crate) fn terminal_width() -> Option<usize> {
    columns().or_else(|| window_columns(std::io::stdout()))
}

/// The width of the terminal on stderr, for errors: `COLUMNS`, else the
/// terminal's; none when stderr is not a terminal (a log is never wrapped,
/// whatever `COLUMNS` says).
pub(super) fn stderr_width() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    columns().or_else(|| window_columns(std::io::stderr()))
}

/// `COLUMNS`, when it is a number.
fn columns() -> Option<usize> {
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok())
}

/// The width of the terminal `stream` is, if it is one.
fn window_columns(stream: impl std::os::fd::AsFd) -> Option<usize> {
    let size = rustix::termios::tcgetwinsize(stream).ok()?;
    (size.ws_col > 0).then_some(usize::from(size.ws_col))
}

/// A body as a person reads it: a lone `body` string as text, any other
/// JSON as JSON; escapes shown, never sent to the terminal.
pub(super) fn body_text(body: &serde_json::Value) -> String {
    match body.get("body").and_then(|b| b.as_str()) {
        Some(text) if body.as_object().is_some_and(|o| o.len() == 1) => {
            printable(text, true).replace('\t', "    ")
        }
        // serde_json escapes C0 controls in strings, not C1 ones nor
        // bidirectional overrides.
        _ => printable(&body.to_string(), false).into_owned(),
    }
}

/// `line` cut at word boundaries into lines of at most `width` characters
/// (a word longer than that stands alone); whole when there is no width.
pub(crate) fn wrap(line: &str, width: Option<usize>) -> Vec<String> {
    let Some(width) = width else {
        return vec![line.to_owned()];
    };
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in line.split(' ') {
        let needed =
            current.chars().count() + usize::from(!current.is_empty()) + word.chars().count();
        if !current.is_empty() && needed > width {
            lines.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    lines.push(current);
    lines
}

/// `prefix` and `rest` on one line, or on a terminal too narrow for it,
/// `rest` wrapped at word boundaries with the lines after the first
/// indented by `indent`; each line ends in a newline.
pub(crate) fn hanging(prefix: &str, rest: &str, indent: usize, width: Option<usize>) -> String {
    let taken = prefix.chars().count();
    let parts = match width {
        // Every line fits what the widest of its margins leaves.
        Some(width) if taken + rest.chars().count() > width => {
            wrap(rest, Some(width.saturating_sub(taken.max(indent)).max(20)))
        }
        _ => vec![rest.to_owned()],
    };
    let mut text = prefix.to_owned();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            text.push_str(&" ".repeat(indent));
        }
        text.push_str(part);
        text.push('\n');
    }
    text
}

/// `HH:MM:SS.mmm` of a time, for tables whose header gives the date.
pub(crate) fn clock_time(ms: i64) -> String {
    let full = format_ms(ms);
    full.get(11..23).map(str::to_owned).unwrap_or(full)
}

/// A bordered table fitted to `width`, or to 100 columns without one.
pub(super) fn new_table(headers: &[&str], width: Option<usize>) -> Table {
    let width = width.and_then(|w| u16::try_from(w).ok()).unwrap_or(100);
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width)
        .set_header(headers.iter().copied());
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_words_whole() {
        assert_eq!(wrap("a bb ccc dddd", Some(6)), vec!["a bb", "ccc", "dddd"]);
        assert_eq!(
            wrap("averyveryverylongword x", Some(5)),
            vec!["averyveryverylongword", "x"]
        );
        assert_eq!(wrap("no width, no cut", None), vec!["no width, no cut"]);
    }

    #[test]
    fn a_hanging_line_wraps_only_past_the_width_and_indents_the_rest() {
        let words = "one two three four five six seven eight nine ten eleven twelve";
        assert_eq!(hanging("> ", words, 2, None), format!("> {words}\n"));
        assert_eq!(hanging("> ", words, 2, Some(80)), format!("> {words}\n"));
        // A prefix wider than the indent narrows every line alike.
        assert_eq!(
            hanging("12345678", "aaaa bbbb cccc dddd eeee", 2, Some(30)),
            "12345678aaaa bbbb cccc dddd\n  eeee\n"
        );
        assert_eq!(
            hanging("> ", words, 4, Some(30)),
            "> one two three four five\n    six seven eight nine ten\n    eleven twelve\n"
        );
    }

    #[test]
    fn durations_are_exact_and_counts_agree() {
        assert_eq!(duration(60_000), "60s");
        assert_eq!(duration(1_999), "1.999s");
        assert_eq!(duration(1_500), "1.5s");
        assert_eq!(count(1, "discussion", "discussions"), "1 discussion");
        assert_eq!(count(0, "discussion", "discussions"), "0 discussions");
        assert_eq!(printable("a\u{1b}[31mb\nc", false), "a\\u{1b}[31mb\\nc");
        assert_eq!(printable("a\nb\tc\u{7}", true), "a\nb\tc\\u{7}");
        assert!(matches!(
            printable("plain", false),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn relative_times_read_naturally() {
        assert_eq!(relative(41_000, 0), "in 41s");
        assert_eq!(relative(0, 180_000), "3m00s ago");
        assert_eq!(relative(7_200_000, 0), "in 2h00m");
    }
}
