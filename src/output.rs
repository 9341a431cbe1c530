//! Rendering: the JSON views of the contract and the human tables. Colour
//! is decided here and nowhere else.

use crate::cli::ColorChoice;
use crate::clock::format_ms;
use crate::discussion::{Attempt, Discussion, Entry, Root, Status};
use crate::error::Error;
use crate::ledger::{Body, Record};
use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde_json::{Map, Value, json};
use std::io::{IsTerminal, Write};

#[derive(Debug, Clone)]
pub struct Output {
    pub json: bool,
    /// Colour on stdout.
    pub color: bool,
    /// Colour on stderr, decided by stderr's own terminal: `discuss list
    /// 2>errors.log` colours the list and not the log.
    pub color_stderr: bool,
}

impl Output {
    /// Colour only on a terminal, never with `--json`; `NO_COLOR` and
    /// `TERM=dumb` turn `auto` off; `--color always|never` overrides them.
    /// Each stream is judged by its own terminal.
    pub fn new(json: bool, choice: ColorChoice) -> Output {
        let wanted = |terminal: bool| {
            !json
                && match choice {
                    ColorChoice::Always => true,
                    ColorChoice::Never => false,
                    ColorChoice::Auto => {
                        std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                            && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
                            && terminal
                    }
                }
        };
        Output {
            json,
            color: wanted(std::io::stdout().is_terminal()),
            color_stderr: wanted(std::io::stderr().is_terminal()),
        }
    }

    pub fn as_json(&self) -> Output {
        Output {
            json: true,
            color: false,
            color_stderr: false,
        }
    }

    /// Prints one JSON object on stdout.
    pub fn print_json(&self, value: &Value) {
        write_stdout(&format!("{value}\n"));
    }

    pub fn print_text(&self, text: &str) {
        write_stdout(text);
    }

    /// The error on stderr: one JSON object in JSON mode, else
    /// `error[code]: message` and `hint:` lines.
    pub fn print_error(&self, error: &Error) {
        let text = if self.json {
            format!("{}\n", error.to_json())
        } else if self.color_stderr {
            let human = error.to_human();
            human.replacen("error[", "\x1b[1;31merror\x1b[0m[", 1)
        } else {
            error.to_human()
        };
        let _ = std::io::stderr().write_all(text.as_bytes());
    }

    pub fn status(&self, status: Status) -> String {
        if !self.color {
            return status.as_str().to_owned();
        }
        let code = match status {
            Status::Invalid => "1;31",
            Status::Closed => "32",
            Status::Deadman | Status::Expired => "31",
            Status::Exhausted => "33",
            Status::Active => "1;36",
            Status::Open => "36",
        };
        format!("\x1b[{code}m{}\x1b[0m", status.as_str())
    }
}

/// A closed pipe (`discuss list | head -1`) is not an error: the reader
/// has what it wanted, and every write to the ledger is done by the time
/// anything is printed, so the process ends quietly with success.
fn write_stdout(text: &str) {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(err) => {
            let _ = writeln!(
                std::io::stderr(),
                "error[io_error]: writing to stdout: {err}"
            );
            std::process::exit(1);
        }
    }
}

fn time(ms: Option<i64>) -> Value {
    ms.map(format_ms).map_or(Value::Null, Value::from)
}

pub fn policy_json(root: &Root) -> Value {
    json!({
        "max_turns": root.policy.max_turns,
        "timeout_ms": root.policy.timeout_ms,
        "turn_timeout_ms": root.policy.turn_timeout_ms,
        "conversation_deadline_at": format_ms(root.deadline_ms),
    })
}

pub fn attempt_json(attempt: &Attempt) -> Value {
    json!({
        "attempt_id": attempt.attempt_id,
        "agent_id": attempt.agent_id,
        "turn": attempt.turn,
        "head_message_id": attempt.head_message_id,
        "state": attempt.state.as_str(),
        "reserved_at": format_ms(attempt.reserved_at_ms),
        "deadline_at": format_ms(attempt.deadline_ms),
        "started_at": time(attempt.started_at_ms),
        "ended_at": time(attempt.ended_at_ms),
        "reply_message_id": attempt.reply_message_id,
        "reason": attempt.reason,
        "exit_code": attempt.exit_code,
        "signal": attempt.signal,
        "pid": attempt.pid,
        "detail": attempt.detail,
    })
}

/// A receipt as `show` lists it: ledger fields, times as `*_at`.
pub fn receipt_json(record: &Record) -> Value {
    let Body::Receipt(receipt) = &record.body else {
        return Value::Null;
    };
    let mut map = Map::new();
    map.insert("receipt_id".into(), record.id.clone().into());
    map.insert("receipt".into(), receipt.receipt.clone().into());
    map.insert("at".into(), format_ms(record.at_ms).into());
    map.insert("by".into(), record.by.clone().into());
    if let Value::Object(fields) = record.to_json() {
        for (key, value) in fields {
            match key.as_str() {
                "v" | "kind" | "id" | "at_ms" | "by" | "receipt" | "discussion_id" => {}
                "deadline_ms" => {
                    map.insert("deadline_at".into(), time(value.as_i64()));
                }
                _ => {
                    map.insert(key, value);
                }
            }
        }
    }
    Value::Object(map)
}

fn head_json(head: &Entry) -> Value {
    json!({
        "message_id": head.message_id,
        "turn": head.turn,
        "from_agent_id": head.from_agent_id,
        "to_agent_id": head.to_agent_id,
    })
}

/// The receipts tied to a message: those of the attempts that answered it
/// and the `completed` receipt that produced it.
fn receipts_of<'a>(
    discussion: &'a Discussion,
    message_id: &'a str,
) -> impl Iterator<Item = &'a Record> {
    discussion.receipts.iter().filter(move |record| {
        let Body::Receipt(receipt) = &record.body else {
            return false;
        };
        let answered = receipt
            .attempt_id
            .as_deref()
            .and_then(|id| discussion.attempt(id))
            .is_some_and(|a| a.head_message_id == message_id);
        answered || receipt.message_id.as_deref() == Some(message_id)
    })
}

pub fn entry_json(discussion: &Discussion, entry: &Entry, include_receipts: bool) -> Value {
    let mut value = json!({
        "turn": entry.turn,
        "message_id": entry.message_id,
        "from_agent_id": entry.from_agent_id,
        "to_agent_id": entry.to_agent_id,
        "type": entry.kind.as_str(),
        "reply_to_message_id": entry.reply_to_message_id,
        "attempt_id": entry.attempt_id,
        "close": entry.close,
        "payload": entry.body,
        "at": format_ms(entry.at_ms),
    });
    if include_receipts {
        value["receipts"] = receipts_of(discussion, &entry.message_id)
            .map(receipt_json)
            .collect();
    }
    value
}

/// The `show` object of the contract.
pub fn discussion_json(discussion: &Discussion, include_receipts: bool) -> Value {
    let root = discussion.root.as_ref();
    json!({
        "discussion_id": discussion.id,
        "fleet_id": root.map(|r| r.fleet_id.clone()),
        "participants": root.map_or_else(Vec::new, |r| vec![r.asker.clone(), r.peer.clone()]),
        "policy": root.map_or(Value::Null, policy_json),
        "status": discussion.status.as_str(),
        "terminal_at": time(discussion.terminal.map(|(_, at)| at).filter(|_| discussion.status.is_terminal())),
        "created_at": time(root.map(|r| r.created_at_ms)),
        "updated_at": format_ms(discussion.updated_at_ms),
        "turns_used": discussion.turns_used,
        "turns_remaining": discussion.turns_remaining(),
        "head": discussion.head().map_or(Value::Null, head_json),
        "transcript": discussion.transcript.iter().map(|e| entry_json(discussion, e, include_receipts)).collect::<Vec<_>>(),
        "attempts": discussion.attempts.iter().map(attempt_json).collect::<Vec<_>>(),
        "escalation": discussion.escalation.as_ref().map_or(Value::Null, |e| json!({
            "receipt_id": e.receipt_id,
            "at": format_ms(e.at_ms),
            "turns_used": e.turns_used,
        })),
        "integrity_findings": discussion.findings.iter().map(|f| json!({
            "kind": f.kind.as_str(),
            "message_id": f.message_id,
            "line": f.line,
            "detail": f.detail,
            "record_id": f.record_id,
        })).collect::<Vec<_>>(),
    })
}

/// "in 41s" / "3m ago" relative to `now_ms`.
pub fn relative(ms: i64, now_ms: i64) -> String {
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
pub fn duration(ms: i64) -> String {
    if ms % 1000 == 0 {
        return format!("{}s", ms / 1000);
    }
    let text = format!("{:.3}", ms as f64 / 1000.0);
    format!("{}s", text.trim_end_matches('0'))
}

/// Text from the ledger (a reason, a detail, a body) made safe for a
/// terminal: control characters, escape sequences and line breaks shown
/// as escapes (`\u{1b}`, `\n`), so no record can move the cursor, recolour
/// the screen or forge lines of output. With `keep_lines`, line breaks
/// and tabs stay (a Markdown body).
pub fn printable(text: &str, keep_lines: bool) -> std::borrow::Cow<'_, str> {
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

/// "1 discussion", "2 discussions": `n` and the word for it.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Shortens `text` to `max` characters, with an ellipsis.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(max.saturating_sub(1)).collect();
    short.push('…');
    short
}

/// Terminal width for tables: `COLUMNS`, else the terminal's, else 100.
pub fn table_width() -> u16 {
    terminal_width()
        .and_then(|w| u16::try_from(w).ok())
        .unwrap_or(100)
}

/// The width to wrap text for: the terminal's, when stdout is one (or
/// `COLUMNS` says); none in a pipe or a file, where lines stay whole.
pub fn terminal_width() -> Option<usize> {
    if let Some(columns) = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()) {
        return Some(columns);
    }
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    comfy_table::Table::new().width().map(usize::from)
}

/// A body as a person reads it: a lone `body` string as text, any other
/// JSON as JSON; escapes shown, never sent to the terminal.
fn body_text(body: &serde_json::Value) -> String {
    match body.get("body").and_then(|b| b.as_str()) {
        Some(text) if body.as_object().is_some_and(|o| o.len() == 1) => {
            printable(text, true).replace('\t', "    ")
        }
        // serde_json escapes every control character in strings.
        _ => body.to_string(),
    }
}

/// `line` cut at word boundaries into lines of at most `width` characters
/// (a word longer than that stands alone); whole when there is no width.
pub fn wrap(line: &str, width: Option<usize>) -> Vec<String> {
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

/// Keeps the given columns (ids, times) whole: a wrapped id cannot be
/// copied into the next command. The other columns take what is left.
pub fn keep_whole(table: &mut Table, columns: &[usize]) {
    for &index in columns {
        if let Some(column) = table.column_mut(index) {
            column.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
        }
    }
}

/// `HH:MM:SS.mmm` of a time, for tables whose header gives the date.
pub fn clock_time(ms: i64) -> String {
    let full = format_ms(ms);
    full.get(11..23).map(str::to_owned).unwrap_or(full)
}

pub fn new_table(headers: &[&str]) -> Table {
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(table_width())
        .set_header(headers.iter().copied());
    table
}

/// The human view of `show`: a header, then transcript, attempts, findings.
pub fn discussion_human(out: &Output, discussion: &Discussion, now_ms: i64) -> String {
    let mut text = String::new();
    let status = out.status(discussion.status);
    let Some(root) = &discussion.root else {
        text.push_str(&format!(
            "{}  {status}  (no usable root message)\n",
            discussion.id
        ));
        text.push_str(&findings_table(discussion));
        return text;
    };
    text.push_str(&format!(
        "{}  {status}\nparticipants  {} (asker) ⇄ {} (peer) in fleet {}\n",
        discussion.id, root.asker, root.peer, root.fleet_id
    ));
    // A finished discussion has no turns left to spend, no deadline to
    // count down to and nobody next: say only what was.
    let over = discussion.status.is_terminal();
    if over {
        text.push_str(&format!(
            "budget        {} of {} turns used; {} per turn\n",
            discussion.turns_used,
            root.policy.max_turns,
            duration(root.policy.turn_timeout_ms)
        ));
    } else {
        text.push_str(&format!(
            "budget        {} of {} turns used, {} remaining; {} per turn\n",
            discussion.turns_used,
            root.policy.max_turns,
            discussion.turns_remaining(),
            duration(root.policy.turn_timeout_ms)
        ));
    }
    text.push_str(&format!(
        "created       {} ({})\n",
        format_ms(root.created_at_ms),
        relative(root.created_at_ms, now_ms)
    ));
    if over {
        text.push_str(&format!("deadline      {}\n", format_ms(root.deadline_ms)));
    } else {
        text.push_str(&format!(
            "deadline      {} ({})\n",
            format_ms(root.deadline_ms),
            relative(root.deadline_ms, now_ms)
        ));
    }
    if let Some(head) = discussion.head() {
        if over {
            text.push_str(&format!(
                "last message  {} (turn {}) from {}\n",
                head.message_id, head.turn, head.from_agent_id
            ));
        } else {
            text.push_str(&format!(
                "head          {} (turn {}) → {}\n",
                head.message_id, head.turn, head.to_agent_id
            ));
        }
    }
    if let Some(live) = discussion.live_attempt() {
        text.push_str(&format!(
            "live          {} holds turn {} until {} ({})\n",
            live.agent_id,
            live.turn,
            format_ms(live.deadline_ms),
            relative(live.deadline_ms, now_ms)
        ));
    }
    if let Some(escalation) = &discussion.escalation {
        text.push_str(&format!(
            "escalated     {} at {} after {} turns\n",
            escalation.receipt_id,
            format_ms(escalation.at_ms),
            escalation.turns_used
        ));
    }
    // One block a message, not a table: a body keeps its words and lines
    // whole (wrapped at word boundaries only on a terminal, never in a
    // pipe or a file), and ids are never split.
    let width = terminal_width();
    text.push_str("\nTranscript\n");
    for entry in &discussion.transcript {
        let kind = if entry.close {
            format!("{} (close)", entry.kind.as_str())
        } else {
            entry.kind.as_str().to_owned()
        };
        text.push_str(&format!(
            "\nturn {} · {} → {} · {} · {}\n  {}\n",
            entry.turn,
            entry.from_agent_id,
            entry.to_agent_id,
            kind,
            clock_time(entry.at_ms),
            entry.message_id
        ));
        for line in body_text(&entry.body).lines() {
            for wrapped in wrap(line, width.map(|w| w.saturating_sub(4).max(20))) {
                text.push_str(&format!("    {wrapped}\n"));
            }
        }
    }
    if !discussion.attempts.is_empty() {
        text.push_str("\nAttempts\n");
        for a in &discussion.attempts {
            let ended = a
                .ended_at_ms
                .map(|t| format!("ended {}", clock_time(t)))
                .unwrap_or_else(|| format!("due {}", clock_time(a.deadline_ms)));
            text.push_str(&format!(
                "turn {} · {} · {} · reserved {} · {ended}\n  {}",
                a.turn,
                a.agent_id,
                a.state.as_str(),
                clock_time(a.reserved_at_ms),
                a.attempt_id
            ));
            if let Some(reason) = &a.reason {
                text.push_str(&format!(" · {}", printable(reason, false)));
            }
            text.push('\n');
        }
    }
    text.push_str(&findings_table(discussion));
    text
}

fn findings_table(discussion: &Discussion) -> String {
    if discussion.findings.is_empty() {
        return String::new();
    }
    let mut findings = new_table(&["kind", "line", "record", "detail"]);
    for f in &discussion.findings {
        findings.add_row(vec![
            f.kind.as_str().to_owned(),
            f.line.to_string(),
            f.record_id.clone(),
            printable(&f.detail, false).into_owned(),
        ]);
    }
    keep_whole(&mut findings, &[0, 1, 2]);
    format!("\nIntegrity findings\n{findings}\n")
}

/// `show --format markdown`: a heading with the status, participants and
/// budget, then a section a turn (from → to, type, time) with the whole
/// body: a `body` string as it is, any other JSON in a fenced block. For
/// pasting into an issue, a pull request or a report, where nothing is cut.
pub fn discussion_markdown(d: &crate::discussion::Discussion) -> String {
    let mut text = format!("# Discussion `{}`: {}\n\n", d.id, d.status.as_str());
    if let Some(root) = &d.root {
        text.push_str(&format!(
            "- **Participants:** {} → {} (fleet {})\n",
            md_inline(&root.asker),
            md_inline(&root.peer),
            md_inline(&root.fleet_id)
        ));
        text.push_str(&format!(
            "- **Budget:** {} of {} turns used\n",
            d.turns_used,
            d.max_turns()
        ));
        text.push_str(&format!(
            "- **Started:** {} · **deadline:** {}\n",
            crate::clock::format_ms(root.created_at_ms),
            crate::clock::format_ms(root.deadline_ms)
        ));
    }
    if let Some(escalation) = &d.escalation {
        text.push_str(&format!(
            "- **Escalated** at {} after {} turns\n",
            crate::clock::format_ms(escalation.at_ms),
            escalation.turns_used
        ));
    }
    if !d.findings.is_empty() {
        text.push_str(&format!("- **Integrity findings:** {}\n", d.findings.len()));
    }
    for entry in &d.transcript {
        text.push_str(&format!(
            "\n## Turn {} · {} → {} · {}{} · {}\n\n",
            entry.turn,
            md_inline(&entry.from_agent_id),
            md_inline(&entry.to_agent_id),
            entry.kind.as_str(),
            if entry.close { " (closes)" } else { "" },
            crate::clock::format_ms(entry.at_ms)
        ));
        match entry.body.get("body").and_then(|b| b.as_str()) {
            Some(body) if entry.body.as_object().is_some_and(|o| o.len() == 1) => {
                text.push_str(&printable(body.trim_end(), true));
                text.push('\n');
            }
            _ => {
                // serde_json escapes every control character in strings.
                let json = serde_json::to_string_pretty(&entry.body).unwrap_or_default();
                let fence = fence_for(&json);
                text.push_str(&format!("{fence}json\n{json}\n{fence}\n"));
            }
        }
    }
    text
}

/// Agent and fleet ids are safe (`[A-Za-z0-9._-]`), but `_` would start
/// emphasis: they go in code spans.
fn md_inline(id: &str) -> String {
    format!("`{id}`")
}

/// A code fence longer than any run of backticks inside the text.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
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

    #[test]
    fn shortening_counts_characters() {
        assert_eq!(shorten("ééééé", 3), "éé…");
        assert_eq!(shorten("abc", 3), "abc");
    }
}
