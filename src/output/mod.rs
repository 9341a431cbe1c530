//! The one output layer. Commands build views (serde structs with the
//! contract's field names) and hand them over as an `Answer`; this module
//! alone decides how they are shown: the contract's JSON, human text or
//! Markdown, with colour and width decided once, and a closed pipe handled
//! once.

mod admin;
mod discussion;
mod events;
mod ledger;
mod rows;
mod text;
mod writes;

pub(crate) use admin::{FleetView, FleetsView, KillSwitchView, QuotaView};
pub(crate) use discussion::{DiscussionView, Reached, render_all};
pub(crate) use events::EventView;
pub(crate) use ledger::{ExportView, ImportView, InfoView, VerifyView};
pub(crate) use rows::RowsView;
pub(crate) use text::{terminal_width, wrap};
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
        // Written straight out: a list of any length is never held whole.
        if let Err(err) = serde_json::to_writer(&mut *out, self) {
            out.fail(&err.to_string());
        }
        out.text("\n");
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
pub(crate) struct Answer<'a> {
    pub view: Option<Box<dyn Render + 'a>>,
    pub form: Form,
    pub status: u8,
}

impl<'a> Answer<'a> {
    pub(crate) fn new(view: impl Render + 'a) -> Answer<'a> {
        Answer {
            status: view.exit_status(),
            view: Some(Box::new(view)),
            form: Form::Usual,
        }
    }

    /// An answer already printed item by item (`Output::item`).
    pub(crate) fn streamed(status: u8) -> Answer<'a> {
        Answer {
            view: None,
            form: Form::Usual,
            status,
        }
    }

    /// `-q`: only ids, when `quiet`.
    pub(crate) fn quiet(mut self, quiet: bool) -> Answer<'a> {
        if quiet {
            self.form = Form::Ids;
        }
        self
    }

    pub(crate) fn form(mut self, form: Form) -> Answer<'a> {
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
    pub(crate) fn emit(&self, answer: &Answer) {
        let Some(view) = &answer.view else {
            return;
        };
        let mut out = Sink::stdout();
        match answer.form {
            Form::Ids => {
                // One id a line, for `xargs` and `while read`.
                for id in view.ids() {
                    out.text(id);
                    out.text("\n");
                }
            }
            _ if self.json => view.json(&mut out),
            Form::Markdown => view.markdown(&mut out),
            Form::Usual => view.human(&self.style(), &mut out),
        }
        out.flush();
    }

    /// One item of a stream (`events`), shown and flushed at once.
    pub(crate) fn item(&self, view: &dyn Render) {
        let mut out = Sink::stdout();
        if self.json {
            view.json(&mut out);
        } else {
            view.human(&self.style(), &mut out);
        }
        out.flush();
    }

    /// Plain text that is no view (the help of bare `discuss`, a
    /// completion script).
    pub(crate) fn print_text(&self, text: &str) {
        let mut out = Sink::stdout();
        out.text(text);
        out.flush();
    }

    /// A note for a person on stderr (`note: …`), never on stdout, where
    /// a stream's records go.
    pub(crate) fn note(&self, text: &str) {
        let line = format!("note: {}\n", crate::escape::printable(text, false));
        let _ = std::io::stderr().write_all(line.as_bytes());
    }

    /// Raw bytes on stdout (`ledger export` to stdout).
    pub(crate) fn sink(&self) -> Sink {
        Sink::stdout()
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
        let _ = std::io::stderr().write_all(text.as_bytes());
    }
}

/// Buffered stdout. A closed pipe (`discuss list | head -1`) is not an
/// error: the reader has what it wanted, and every write to the ledger is
/// done by the time anything is printed, so the process ends quietly with
/// success. Any other failure to write is `io_error`, exit 1.
pub(crate) struct Sink {
    out: BufWriter<Stdout>,
}

impl Sink {
    fn stdout() -> Sink {
        Sink {
            out: BufWriter::with_capacity(1 << 16, std::io::stdout()),
        }
    }

    pub(crate) fn text(&mut self, text: &str) {
        if let Err(err) = self.out.write_all(text.as_bytes()) {
            self.failed(&err);
        }
    }

    pub(crate) fn flush(&mut self) {
        if let Err(err) = self.out.flush() {
            self.failed(&err);
        }
    }

    fn failed(&mut self, err: &std::io::Error) -> ! {
        if err.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        self.fail(&err.to_string())
    }

    fn fail(&mut self, detail: &str) -> ! {
        let _ = writeln!(
            std::io::stderr(),
            "error[io_error]: writing to stdout: {detail}"
        );
        std::process::exit(1);
    }
}

impl Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match self.out.write_all(bytes) {
            Ok(()) => Ok(bytes.len()),
            Err(err) => self.failed(&err),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Sink::flush(self);
        Ok(())
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        Sink::flush(self);
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
