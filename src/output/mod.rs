//! The one output layer. Commands build views from plain facts (serde
//! structs with the contract's field names; a view never reads the
//! ledger) and hand them over as an `Answer`; this module alone decides
//! how they are shown: the contract's JSON, human text or Markdown, with
//! colour and width decided once, rendered into any `io::Write` (a
//! `Sink`: stdout, or a buffer in a test). A closed stdout is noted here
//! and forgiven once, at the edge (`app`).

mod admin;
mod approvals;
mod delivery;
mod discussion;
mod escalations;
mod events;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use events::json_by_hand_as_serde;
mod json_line;
mod ledger;
mod live;
mod rows;
mod text;
mod writes;

pub(crate) use admin::{
    FleetView, FleetsView, KillSwitchView, QuotaView, TokenIssuedView, TokensView,
};
pub(crate) use approvals::{ApprovalsView, DecidedView, GatesView, asks_when};
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use discussion::render_all;
pub(crate) use discussion::{DiscussionView, Reached};
pub(crate) use escalations::{
    DeliveryPassView, DeliveryView, EscalationsView, approval_handout, escalation_env,
    escalation_object,
};
pub(crate) use events::{EventView, TimedEndView};
pub(crate) use ledger::{
    ExportView, ImportView, InfoView, KeygenView, SealHeld, SealView, VerifyView,
};
pub(crate) use live::{HookView, TurnView};
pub(crate) use rows::{RowsView, summary_row_json};
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use rows::{rows_by_hand_as_serde, summary_row_as_serde};
pub(crate) use text::{relative, terminal_width, wrap};
pub(crate) use writes::{AskView, ReplyView, WakeView};

use crate::discussion::Status;
use crate::error::Error;
use serde::Serialize;
use serde_json::Value;
use std::io::{BufWriter, IsTerminal, Stdout, Write};

/// `--color`: when to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// How answers are shown, decided once per process from `--json`,
/// `--color`, `NO_COLOR`, `TERM` and which streams are terminals.
#[derive(Debug, Clone)]
pub(crate) struct Output {
    pub json: bool,
    /// Colour on stdout.
    pub color: bool,
    /// Colour on stderr, decided by stderr's own terminal: `discuss list
    /// 2>errors.log` colours the list and not the log.
    pub color_stderr: bool,
    /// The style of human text, looked up once when first needed (never
    /// for JSON; once for a stream of events, not once a line).
    style: std::sync::OnceLock<Style>,
}

/// What a human rendering may use: colour and the width to fit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    pub color: bool,
    /// The terminal's width (or `COLUMNS`); none in a pipe or a file,
    /// where nothing is wrapped or cut.
    pub width: Option<usize>,
}

impl Style {
    /// A status, coloured when colour is on. Put in after any padding:
    /// escapes must never count as width.
    pub(crate) fn status(&self, status: Status) -> String {
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

    /// A bordered table fitted to the width (100 columns when there is
    /// none, so a pipe still gets a table that reads in a log).
    pub(crate) fn table(&self, headers: &[&str]) -> comfy_table::Table {
        text::new_table(headers, self.width)
    }
}

/// A command's answer, in every form the output layer can show.
pub(crate) trait View {
    /// Human text, for a terminal or a log.
    fn human(&self, style: &Style, out: &mut Sink);
    /// Markdown (`show --format markdown`); the human text where a view
    /// has no Markdown form.
    fn markdown(&self, out: &mut Sink) {
        self.human(
            &Style {
                color: false,
                width: None,
            },
            out,
        );
    }
    /// The exit status the answer carries (0 but for a supervised turn
    /// that failed or lapsed, and `verify` with findings).
    fn exit_status(&self) -> u8 {
        0
    }
    /// The ids `-q` prints, one a line.
    fn ids(&self) -> Vec<&str> {
        Vec::new()
    }
    /// Its JSON written by hand into `out` (`Sink::by_hand`), byte for
    /// byte serde's, where serde's costs too much (the event stream's
    /// million lines, a list's tens of thousands of rows); false: serde's
    /// is written (`out` as it was). A long one may hand its blocks on as
    /// it goes (`Sink::hand_on_when_full`), and is then written whole.
    fn json_by_hand(&self, _out: &mut Sink) -> bool {
        false
    }
}

/// A view with its JSON: every `View` that is `Serialize`. Object-safe, so
/// commands can return any of them.
pub(crate) trait Render: View {
    /// The contract's JSON, as one line.
    fn json(&self, out: &mut Sink);
    /// The contract's JSON as a value (`call`, MCP).
    fn value(&self) -> Value;
}

impl<T: View + Serialize> Render for T {
    fn json(&self, out: &mut Sink) {
        out.json_line(self);
    }

    fn value(&self) -> Value {
        // Views hold strings, numbers and JSON values only: nothing that
        // can fail to serialize (maps with non-string keys).
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// An answer that is JSON in every form: `call`'s, made for programs.
impl View for Value {
    fn human(&self, _style: &Style, out: &mut Sink) {
        out.text(&format!("{self}\n"));
    }
}

/// The form an answer asks for besides JSON and human text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// JSON with `--json`, else human text.
    Usual,
    /// `-q`: only the ids, also with `--json`.
    Ids,
    /// `--format markdown` (`--json` wins).
    Markdown,
}

/// What a command returns: its view (none when it streamed its output
/// already, as `events` does), the form asked for, and the exit status.
pub(crate) struct Answer {
    pub view: Option<Box<dyn Render>>,
    pub form: Form,
    pub status: u8,
}

impl Answer {
    pub(crate) fn new(view: impl Render + 'static) -> Answer {
        Answer {
            status: view.exit_status(),
            view: Some(Box::new(view)),
            form: Form::Usual,
        }
    }

    /// An answer already printed item by item (`Output::item`).
    pub(crate) fn streamed(status: u8) -> Answer {
        Answer {
            view: None,
            form: Form::Usual,
            status,
        }
    }

    /// `-q`: only ids, when `quiet`.
    pub(crate) fn quiet(mut self, quiet: bool) -> Answer {
        if quiet {
            self.form = Form::Ids;
        }
        self
    }

    pub(crate) fn form(mut self, form: Form) -> Answer {
        self.form = form;
        self
    }
}

impl Output {
    /// Colour only on a terminal, never with `--json`; `NO_COLOR` and
    /// `TERM=dumb` turn `auto` off; `--color always|never` overrides them.
    /// Each stream is judged by its own terminal.
    pub(crate) fn new(json: bool, choice: ColorChoice) -> Output {
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
            style: std::sync::OnceLock::new(),
        }
    }

    pub(crate) fn as_json(&self) -> Output {
        Output {
            json: true,
            color: false,
            color_stderr: false,
            style: std::sync::OnceLock::new(),
        }
    }

    /// The style of human text on stdout.
    pub(crate) fn style(&self) -> Style {
        *self.style.get_or_init(|| Style {
            color: self.color,
            width: terminal_width(),
        })
    }

    /// Shows a command's answer on stdout in the form asked for.
    pub(crate) fn emit(&self, answer: &Answer) -> Result<(), Error> {
        let Some(view) = &answer.view else {
            return Ok(());
        };
        self.to_stdout(|out| {
            self.render(view.as_ref(), answer.form, out);
            Ok(())
        })
    }

    /// Renders a view in `form` into any sink (stdout, or a buffer in a
    /// test).
    pub(crate) fn render(&self, view: &dyn Render, form: Form, out: &mut Sink) {
        match form {
            Form::Ids => {
                // One id a line, for `xargs` and `while read`.
                for id in view.ids() {
                    out.text(id);
                    out.text("\n");
                }
            }
            _ if self.json => view.json(out),
            Form::Markdown => view.markdown(out),
            Form::Usual => view.human(&self.style(), out),
        }
    }

    /// One item of a stream (`events`), shown and flushed at once.
    pub(crate) fn item(&self, view: &dyn Render) -> Result<(), Error> {
        self.to_stdout(|out| {
            self.render(view, Form::Usual, out);
            Ok(())
        })
    }

    /// The items of a stream, through one buffer: written out when it
    /// fills and when `write` returns, not in one write each (a follower
    /// gets them as each read of the ledger ends). `write` gets what
    /// prints one; it answers the first failure to write, which ends the
    /// stream.
    pub(crate) fn items<T>(
        &self,
        write: impl FnOnce(&mut dyn FnMut(&dyn Render) -> Result<(), Error>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut stdout = StdoutWriter::new();
        let mut sink = Sink::new(&mut stdout);
        // The first item goes out at once: a reader sees the stream start
        // without waiting for a buffer to fill.
        let mut first = true;
        let mut item = |view: &dyn Render| {
            self.render(view, Form::Usual, &mut sink);
            if std::mem::take(&mut first) {
                sink.flush_now();
            }
            sink.failure()
        };
        // What was printed before a failure to read goes out all the same.
        let done = write(&mut item);
        let flushed = sink.finish();
        let done = done?;
        flushed?;
        Ok(done)
    }

    /// Plain text that is no view (the help of bare `discuss`, a
    /// completion script).
    pub(crate) fn print_text(&self, text: &str) -> Result<(), Error> {
        self.to_stdout(|out| {
            out.text(text);
            Ok(())
        })
    }

    /// Runs `write` on a sink over buffered stdout, then flushes it: every
    /// answer leaves this way, raw bytes too (`ledger export` writes
    /// through the sink, which is an `io::Write`). The first failure to
    /// write or to flush is the answer's `io_error`.
    pub(crate) fn to_stdout<T>(
        &self,
        write: impl FnOnce(&mut Sink) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut stdout = StdoutWriter::new();
        let mut out = Sink::new(&mut stdout);
        let done = write(&mut out)?;
        out.finish()?;
        Ok(done)
    }

    /// A note for a person on stderr (`note: …`), never on stdout, where
    /// a stream's records go.
    pub(crate) fn note(&self, text: &str) {
        say!("note: {}", crate::escape::printable(text, false));
    }

    /// A line on stderr that something is likely wrong, the command going on.
    pub(crate) fn warn(&self, text: &str) {
        say!("warning: {}", crate::escape::printable(text, false));
    }

    /// The error on stderr: one JSON object in JSON mode, else
    /// `error[code]: message` and `hint:` lines, wrapped at word
    /// boundaries to stderr's terminal (never in a pipe or a log).
    pub(crate) fn print_error(&self, error: &Error) {
        let text = if self.json {
            format!("{}\n", error.to_json())
        } else {
            let mut human = String::new();
            // Looked up only when there is an error to show.
            let width = text::stderr_width();
            for line in error.to_human().lines() {
                for wrapped in wrap(line, width) {
                    human.push_str(&wrapped);
                    human.push('\n');
                }
            }
            if self.color_stderr {
                human.replacen("error[", "\x1b[1;31merror\x1b[0m[", 1)
            } else {
                human
            }
        };
        to_stderr(&text);
    }
}

/// Text for a person on stderr, written whole with one `write`: stderr is
/// not buffered, so `writeln!` and `eprintln!` write each piece apart, and
/// a reader of the pipe (a script waiting for `serve`'s `listening on
/// URL`, the log a supervised child shares) could take half a line for
/// the whole. A closed or full stderr never stops the work: the text is
/// lost.
pub(crate) fn to_stderr(text: &str) {
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Whether a write to stdout found it closed (`discuss list | head -1`).
/// That is not an error: the reader has what it wanted, and every write
/// to the ledger is done by the time anything is printed, so the edge
/// (`app`) ends the process quietly with success when this is set,
/// whatever error the closed pipe surfaced as. A fact of the process,
/// like stdout itself.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(crate) fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Buffered stdout that remembers a closed pipe (`stdout_closed`).
struct StdoutWriter {
    out: BufWriter<Stdout>,
}

impl StdoutWriter {
    fn new() -> StdoutWriter {
        StdoutWriter {
            out: BufWriter::with_capacity(1 << 16, std::io::stdout()),
        }
    }

    fn noted<T>(result: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(err) = &result
            && err.kind() == std::io::ErrorKind::BrokenPipe
        {
            STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        result
    }
}

impl Write for StdoutWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        Self::noted(self.out.write(bytes))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Self::noted(self.out.flush())
    }
}

/// Where a view is rendered: any writer. The first failure to write is
/// kept and nothing more is written; `finish` flushes and answers it as
/// `io_error` (a closed stdout is the edge's to forgive).
pub(crate) struct Sink<'w> {
    out: &'w mut dyn Write,
    /// What was written and not yet handed to `out`: a JSON line is a few
    /// dozen small writes, and each through `out` cost more than the
    /// bytes (a fifth of `events --json`).
    pending: Vec<u8>,
    failed: Option<String>,
}

/// Bytes a sink gathers before it hands them to its writer.
const SINK_BLOCK: usize = 1 << 16;

impl<'w> Sink<'w> {
    pub(crate) fn new(out: &'w mut dyn Write) -> Sink<'w> {
        Sink {
            out,
            pending: Vec::new(),
            failed: None,
        }
    }

    pub(crate) fn text(&mut self, text: &str) {
        self.put(text.as_bytes());
    }

    /// Gathers `bytes`, handing a full block on; false once a write failed.
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> bool {
        if self.failed.is_some() {
            return false;
        }
        self.gather(bytes);
        self.failed.is_none()
    }

    /// Adds `bytes` to what is gathered, handing a full block on.
    #[inline]
    fn gather(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        self.hand_on_when_full();
    }

    /// `value` as one JSON line: a line written by hand (an event, one of
    /// many) straight into what is gathered, through `Vec`'s own writes;
    /// any other through the sink's, which hand it on as blocks fill, so
    /// that a list of any length is never held whole (the first list of a
    /// million-record ledger is 31 MB of JSON).
    fn json_line<T: View + Serialize + ?Sized>(&mut self, value: &T) {
        if self.failed.is_some() {
            return;
        }
        let before = self.pending.len();
        if !value.json_by_hand(self) {
            self.pending.truncate(before);
            if let Err(err) = serde_json::to_writer(Blocks(self), value) {
                self.fail(&err.to_string());
                return;
            }
        }
        self.put(b"\n");
    }

    /// Where a view writes its JSON by hand (`View::json_by_hand`).
    fn by_hand(&mut self) -> &mut Vec<u8> {
        &mut self.pending
    }

    /// Hands on what is gathered (or a view wrote by hand) once it fills
    /// a block; false once a write failed (what follows would go nowhere).
    #[inline]
    fn hand_on_when_full(&mut self) -> bool {
        if self.pending.len() >= SINK_BLOCK {
            self.hand_on();
        }
        self.failed.is_none()
    }

    /// Hands what is gathered to the writer.
    fn hand_on(&mut self) {
        if self.failed.is_none()
            && !self.pending.is_empty()
            && let Err(err) = self.out.write_all(&self.pending)
        {
            self.failed = Some(err.to_string());
        }
        self.pending.clear();
    }

    /// A failure of something that writes through the sink (JSON), kept
    /// unless an earlier one is.
    fn fail(&mut self, detail: &str) {
        self.failed.get_or_insert_with(|| detail.to_owned());
    }

    /// Flushes; the first failure, if any.
    pub(crate) fn finish(mut self) -> Result<(), Error> {
        self.flush_now();
        self.failure()
    }

    /// Writes out what is buffered now (`flush` of a sink is for the
    /// formatters, and does nothing).
    fn flush_now(&mut self) {
        self.hand_on();
        if self.failed.is_none()
            && let Err(err) = self.out.flush()
        {
            self.failed = Some(err.to_string());
        }
    }

    /// The first failure so far, if any.
    fn failure(&self) -> Result<(), Error> {
        match &self.failed {
            None => Ok(()),
            Some(detail) => Err(Error::new(
                crate::error::ErrorCode::IoError,
                format!("writing to stdout: {detail}"),
            )),
        }
    }
}

/// The sink as serde writes a line into it: each of serde's small writes
/// is a `Vec` write, the gathered bytes handed on as each block fills (a
/// failure to hand them on is the sink's, answered when it finishes).
struct Blocks<'s, 'w>(&'s mut Sink<'w>);

impl Write for Blocks<'_, '_> {
    #[inline]
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.write_all(bytes).map(|()| bytes.len())
    }

    #[inline]
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.0.gather(bytes);
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What was written before an answer failed still goes out.
impl Drop for Sink<'_> {
    fn drop(&mut self) {
        self.hand_on();
    }
}

impl Write for Sink<'_> {
    #[inline]
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.write_all(bytes).map(|()| bytes.len())
    }

    #[inline]
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if self.put(bytes) {
            Ok(())
        } else {
            Err(std::io::Error::other("an earlier write failed"))
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A time of the contract: RFC 3339 in UTC with milliseconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At(pub i64);

impl Serialize for At {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&crate::clock::format_ms(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str) -> crate::discussion::Row {
        crate::discussion::Row {
            id: id.into(),
            fleet_id: Some("fleet-alpha".into()),
            participants: vec!["agent-a".into(), "agent-b".into()],
            status: Status::Open,
            turns_used: 1,
            max_turns: 4,
            head_message_id: Some("msg_1".into()),
            head_to_agent_id: Some("agent-b".into()),
            updated_at_ms: 1_000,
            escalated: false,
            live_attempt_id: None,
            live_attempt_deadline_ms: None,
            approval_expires_ms: None,
            live_attempt_delivery: None,
            tokens: 0,
            cost_usd: crate::spend::Usd::ZERO,
        }
    }

    fn rendered(view: &dyn Render, output: &Output, form: Form) -> String {
        let mut buffer = Vec::new();
        let mut sink = Sink::new(&mut buffer);
        output.render(view, form, &mut sink);
        sink.finish().unwrap();
        String::from_utf8(buffer).unwrap()
    }

    #[test]
    fn a_view_renders_into_any_writer() {
        let view = RowsView {
            rows: vec![row("dsc_0123456789abcdef0123456789abcdef")],
            now_ms: 1_000,
            empty: String::new(),
            known_ids: Vec::new(),
            live_turns: false,
            switches: Default::default(),
        };
        let human = rendered(&view, &Output::new(false, ColorChoice::Never), Form::Usual);
        assert!(human.starts_with("discussion "), "{human}");
        assert!(human.contains("agent-a ⇄ agent-b  1/4"), "{human}");
        let json = rendered(&view, &Output::new(true, ColorChoice::Never), Form::Usual);
        let value: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["discussions"][0]["status"], "open");
        let ids = rendered(&view, &Output::new(true, ColorChoice::Never), Form::Ids);
        assert_eq!(ids, "dsc_0123456789abcdef0123456789abcdef\n");
    }

    /// A long answer goes to the writer a block at a time, as it is
    /// serialized, not whole at the end.
    #[test]
    fn a_long_json_answer_is_handed_on_in_blocks() {
        struct Largest(usize, usize);
        impl Write for Largest {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                self.0 = self.0.max(bytes.len());
                self.1 += bytes.len();
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let view = RowsView {
            rows: (0..5_000).map(|i| row(&format!("dsc_{i:032x}"))).collect(),
            now_ms: 1_000,
            empty: String::new(),
            known_ids: Vec::new(),
            live_turns: false,
            switches: Default::default(),
        };
        let mut largest = Largest(0, 0);
        let mut sink = Sink::new(&mut largest);
        Output::new(true, ColorChoice::Never).render(&view, Form::Usual, &mut sink);
        sink.finish().unwrap();
        assert!(largest.1 > 8 * SINK_BLOCK, "{} bytes in all", largest.1);
        assert!(largest.0 < 2 * SINK_BLOCK, "a write of {} bytes", largest.0);
    }

    #[test]
    fn a_narrow_terminal_asks_for_every_id_and_a_pipe_does_not() {
        let view = RowsView {
            rows: vec![row("dsc_0123456789abcdef0123456789abcdef")],
            now_ms: 1_000,
            empty: String::new(),
            known_ids: Vec::new(),
            live_turns: false,
            switches: Default::default(),
        };
        let narrow = Style {
            color: false,
            width: Some(60),
        };
        let pipe = Style {
            color: false,
            width: None,
        };
        assert!(view.needs_known_ids(&narrow));
        assert!(!view.needs_known_ids(&pipe));
    }

    #[test]
    fn a_failed_write_is_an_io_error_and_stops_writing() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::from(std::io::ErrorKind::StorageFull))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut full = Full;
        let mut sink = Sink::new(&mut full);
        sink.text("one");
        sink.text("two");
        let err = sink.finish().unwrap_err();
        assert_eq!(err.code, crate::error::ErrorCode::IoError);
        assert!(
            err.message.starts_with("writing to stdout: "),
            "{}",
            err.message
        );
        assert!(!stdout_closed());
    }
}
