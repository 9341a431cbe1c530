//! The clap front-end: one module per command, each its `Args` and one
//! function that checks the arguments, calls `operations` (or `tools`,
//! for `call` and `mcp`) and returns a view for `output` to render.
//! Commands never import each other; what several share (payload,
//! idempotency and supervision options, reading an input) is here.

pub(crate) mod ask;
pub(crate) mod call;
pub(crate) mod escalations;
pub(crate) mod events;
pub(crate) mod fleet;
pub(crate) mod gate;
pub(crate) mod kill_switch;
pub(crate) mod ledger;
pub(crate) mod list;
pub(crate) mod mcp;
pub(crate) mod quota;
pub(crate) mod reply;
pub(crate) mod search;
pub(crate) mod serve;
pub(crate) mod show;
pub(crate) mod token;
pub(crate) mod top;
pub(crate) mod turn;
pub(crate) mod verify;
pub(crate) mod wait;
pub(crate) mod wake;
mod wake_into;

use crate::error::{Error, ErrorCode, Result};
use crate::output::Output;
use crate::session::Session;
use clap::Args;
use std::io::Read;
use std::path::PathBuf;

/// What every command that touches the ledger needs: the session (the
/// ledger, the clock, who acts) and how to show answers.
pub(crate) struct Context {
    pub session: Session,
    pub out: Output,
}

/// `ctx.ledger`, `ctx.stamp(…)`: a command uses its session's fields and
/// methods as its own.
impl std::ops::Deref for Context {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.session
    }
}

/// A server's first lines on stderr: which ledger it serves, and a
/// warning when that ledger does not exist yet, saying `what_to_do`.
pub(crate) struct Announcement {
    note: String,
    warning: Option<String>,
}

impl Announcement {
    pub(crate) fn of(ctx: &Context, server: &str, warn_if_missing: bool, what_to_do: &str) -> Self {
        let note = format!(
            "{server} serves the {} ledger {}",
            ctx.ledger.kind(),
            ctx.ledger.location()
        );
        let missing = warn_if_missing && !ctx.ledger.exists().unwrap_or(true);
        let which = if ctx.defaulted_ledger {
            "the default ledger (no --ledger or DISCUSS_LEDGER named one)"
        } else {
            "that ledger"
        };
        Announcement {
            note,
            warning: missing.then(|| format!("{which} does not exist yet; {what_to_do}")),
        }
    }

    pub(crate) fn say(&self, out: &Output) {
        out.note(&self.note);
        if let Some(warning) = &self.warning {
            out.warn(warning);
        }
    }
}

// `--payload JSON | --payload-file PATH|-`, shared by `ask` and `reply`.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub(crate) struct PayloadArgs {
    /// The message body as JSON (any JSON value)
    #[arg(long, value_name = "JSON")]
    pub payload: Option<String>,
    /// Read the JSON body from a file, or from stdin with `-`
    #[arg(long, value_name = "PATH|-")]
    pub payload_file: Option<PathBuf>,
}

impl PayloadArgs {
    pub(crate) fn read(&self) -> Result<String> {
        match (&self.payload, &self.payload_file) {
            (Some(payload), _) => Ok(payload.clone()),
            // A body longer than an envelope can never be sent: read no more.
            (None, Some(path)) => read_input(path, crate::discussion::envelope::MAX_ENVELOPE_BYTES),
            // clap requires one of the group; said again for other callers.
            (None, None) => Err(Error::new(
                ErrorCode::Usage,
                "give the body with --payload JSON or --payload-file PATH|-",
            )),
        }
    }
}

// `-q`/`--quiet`, shared by `ask`, `wake`, `list` and `inbox`.
#[derive(Debug, Args)]
pub(crate) struct QuietArgs {
    /// Print only the ids (the new discussion, the new attempt, or one
    /// listed discussion a line), also with --json
    #[arg(short, long)]
    pub quiet: bool,
}

// `--idempotency-key`, shared by `ask`, `wake` and `reply`.
#[derive(Debug, Args)]
pub(crate) struct IdempotencyArgs {
    /// Makes the write safe to retry: the same key with the same arguments
    /// answers the original result ("replayed": true) and writes nothing;
    /// with other arguments it is refused (idempotency_conflict)
    #[arg(long, value_name = "KEY")]
    pub idempotency_key: Option<String>,
}

impl IdempotencyArgs {
    /// The key, checked before the ledger is touched.
    pub(crate) fn key(&self) -> Result<Option<&str>> {
        if let Some(key) = &self.idempotency_key {
            crate::engine::idempotency::check_key(key)?;
        }
        Ok(self.idempotency_key.as_deref())
    }
}

/// Runs the agent's command for `attempt` when one was given (`-- CMD`),
/// unless the answer is a replay: a retry never runs the agent a second
/// time.
fn supervise(
    ctx: &Context,
    options: Option<crate::supervisor::Options>,
    discussion: &crate::discussion::Discussion,
    attempt: Option<&crate::discussion::Attempt>,
    replayed: bool,
    reserved_at: std::time::Instant,
) -> Result<Option<crate::supervisor::Outcome>> {
    match (options, attempt) {
        (Some(options), Some(attempt)) if !replayed => Ok(Some(crate::supervisor::run(
            ctx,
            discussion,
            attempt,
            &options,
            reserved_at,
        )?)),
        _ => Ok(None),
    }
}

// Options of a supervised run (`-- CMD`), shared by `wake` and `ask`.
#[derive(Debug, Args)]
pub(crate) struct SuperviseArgs {
    /// Grace period between SIGTERM and SIGKILL of a supervised run, in ms
    #[arg(
        long,
        default_value_t = 2000,
        value_name = "MS",
        allow_negative_numbers = true
    )]
    pub kill_grace_ms: i64,
    /// Capture the command's stdout; if it exits 0 without replying, post
    /// the output as a `result` reply (JSON body when it is JSON, else {"text": ...})
    #[arg(long)]
    pub reply_from_stdout: bool,
    /// With --reply-from-stdout: close the discussion with that reply
    #[arg(long, requires = "reply_from_stdout")]
    pub close_on_reply: bool,
    /// Start the command with only PATH, HOME, LANG, TERM, the DISCUSS_*
    /// variables and those named by --env, instead of this whole environment
    #[arg(long)]
    pub clean_env: bool,
    /// With --clean-env: also pass this variable on (repeatable)
    #[arg(long = "env", value_name = "NAME", requires = "clean_env")]
    pub keep_env: Vec<String>,
    /// The agent's command, run for exactly this turn (argv, never a shell)
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

impl SuperviseArgs {
    /// The supervision options, or `None` without a command. Checked
    /// before anything is reserved.
    pub(crate) fn options(&self) -> Result<Option<crate::supervisor::Options>> {
        crate::discussion::envelope::check_range(
            "kill_grace_ms",
            self.kill_grace_ms,
            (0, 300_000),
        )?;
        if self.command.is_empty() {
            if self.clean_env {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    "--clean-env needs a command after --",
                ));
            }
            if self.reply_from_stdout {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    "--reply-from-stdout needs a command after --",
                )
                .hint("e.g. discuss wake ... --reply-from-stdout -- ./agent.sh"));
            }
            return Ok(None);
        }
        Ok(Some(crate::supervisor::Options {
            command: self.command.clone(),
            clean_env: self.clean_env.then(|| self.keep_env.clone()),
            kill_grace: std::time::Duration::from_millis(self.kill_grace_ms as u64),
            reply_from_stdout: self.reply_from_stdout,
            close_on_reply: self.close_on_reply,
        }))
    }
}

/// A file's text, or stdin's for `-`, of at most `limit` bytes: one more
/// and it is refused (`payload_too_large`) without reading further, so an
/// endless source (`/dev/zero`, a stream that never closes) costs nothing.
pub(crate) fn read_input(path: &std::path::Path, limit: usize) -> Result<String> {
    let mut bytes = Vec::new();
    let cap = limit as u64 + 1;
    let result = if path.as_os_str() == "-" {
        std::io::stdin().lock().take(cap).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(cap).read_to_end(&mut bytes))
    };
    let unreadable = |detail: String| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("cannot read {}: {detail}", path.display()),
        )
        .detail("path", path.display().to_string())
    };
    result.map_err(|e| unreadable(e.to_string()))?;
    if bytes.len() > limit {
        return Err(Error::new(
            ErrorCode::PayloadTooLarge,
            format!("{} has more than {limit} bytes", path.display()),
        )
        .detail("path", path.display().to_string())
        .detail("max_bytes", limit));
    }
    String::from_utf8(bytes).map_err(|e| unreadable(format!("not UTF-8 ({e})")))
}
