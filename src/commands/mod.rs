//! One module per command: parse arguments, call the engine, render.

pub mod ask;
pub mod call;
pub mod events;
pub mod fleet;
pub mod kill_switch;
pub mod ledger;
pub mod list;
pub mod mcp;
pub mod quota;
pub mod reply;
pub mod show;
pub mod verify;
pub mod wait;
pub mod wake;

use crate::cli::{Cli, Command, GlobalArgs};
use crate::clock::Clock;
use crate::engine::Stamp;
use crate::error::{Error, ErrorCode, Result};
use crate::ledger::{Ledger, View};
use crate::output::{Answer, Output};
use clap::Args;
use std::io::Read;
use std::path::PathBuf;

/// What every command that touches the ledger needs.
pub struct Context {
    pub ledger: Ledger,
    pub clock: Clock,
    pub actor: String,
    pub out: Output,
}

impl Context {
    pub fn new(global: &GlobalArgs, out: Output) -> Result<Context> {
        let location = match &global.ledger {
            Some(location) if !location.as_os_str().is_empty() => location.clone(),
            _ => crate::user::default_ledger_path().ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidArgument,
                    "no ledger path: neither HOME nor XDG_STATE_HOME is set",
                )
                .hint("pass --ledger PATH or set DISCUSS_LEDGER")
            })?,
        };
        let actor = match &global.actor {
            Some(actor) => actor.clone(),
            None => crate::user::user_name().unwrap_or_else(|| "unknown".into()),
        };
        if actor.trim().is_empty() || actor.chars().any(char::is_control) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("actor {actor:?} is empty or has control characters"),
            ));
        }
        Ok(Context {
            ledger: Ledger::at(location, global.allow_network_fs)?.summarize_with(list::summarize),
            clock: Clock::from_env()?,
            actor,
            out,
        })
    }

    /// Time and actor for records written after a ledger whose newest
    /// record is at `last_at_ms`: never earlier than that (a clock behind
    /// uses its time), unless that record is more than the allowed skew
    /// ahead of this clock (`ledger.md`, "Clock skew"): a record from a
    /// clock far ahead never moves anyone else's time.
    pub fn stamp(&self, last_at_ms: Option<i64>) -> Stamp {
        Stamp {
            at_ms: reader_time(self.clock.now_ms(), last_at_ms),
            by: self.actor.clone(),
        }
    }

    /// Now, for readers: as `stamp`.
    pub fn now(&self, last_at_ms: Option<i64>) -> i64 {
        self.stamp(last_at_ms).at_ms
    }
}

/// `max(clock, newest)` when the newest record is not more than the allowed
/// skew ahead of the clock; else the clock. (The newest record that is not
/// ahead is not kept apart, so while one is ahead a writer may stamp up to
/// the allowed skew below an earlier record; `verify` tolerates that.)
pub fn reader_time(clock_ms: i64, last_at_ms: Option<i64>) -> i64 {
    match last_at_ms {
        Some(last) if last <= clock_ms.saturating_add(crate::clock::MAX_SKEW_MS) => {
            last.max(clock_ms)
        }
        _ => clock_ms,
    }
}

/// The discussion an id given on the command line names: the id itself
/// when it is a whole one (or names a discussion exactly), else the one
/// discussion it is a prefix of, when it has at least `dsc_` and four more
/// characters; `ambiguous_id` when several start with it. An id that names
/// nothing is returned as it is, for the command's own `unknown_discussion`.
pub fn resolve_discussion(ctx: &Context, given: &str) -> Result<String> {
    /// `dsc_` and a UUIDv7 in hex: what `discuss` writes.
    const WHOLE: usize = 36;
    /// The shortest prefix looked up: `dsc_` and four characters.
    const SHORTEST: usize = 8;
    if given.len() >= WHOLE || given.len() < SHORTEST || !given.starts_with(crate::ids::DISCUSSION)
    {
        return Ok(given.to_owned());
    }
    let ids = ctx.ledger.discussion_ids_starting(given)?;
    if ids.iter().any(|id| id == given) {
        return Ok(given.to_owned());
    }
    let matches: Vec<&String> = ids.iter().filter(|id| id.starts_with(given)).collect();
    match matches.as_slice() {
        [] => Ok(given.to_owned()),
        [one] => Ok((*one).clone()),
        many => Err(Error::new(
            ErrorCode::AmbiguousId,
            format!("{given} is the start of {} discussion ids", many.len()),
        )
        .detail("prefix", given)
        .detail(
            "candidates",
            many.iter()
                .take(10)
                .map(|id| id.as_str())
                .collect::<Vec<_>>(),
        )
        .hint("give more of the id (`discuss list` shows them whole)")),
    }
}

/// Adds a "did you mean" hint to an `unknown_discussion` error: the
/// ledger's discussion id that the given one is a prefix of, or the one
/// within three edits (a typo, a dropped character).
///
/// Never call it while a write is under way: it reads the ledger.
pub fn near_match(err: Error, ctx: &Context, given: &str) -> Error {
    if err.code != ErrorCode::UnknownDiscussion {
        return err;
    }
    // A hint is not worth failing the command for.
    let ids = ctx.ledger.discussion_ids().unwrap_or_default();
    let prefixed: Vec<&str> = ids
        .iter()
        .map(String::as_str)
        .filter(|id| id.starts_with(given))
        .collect();
    let near = if prefixed.len() == 1 {
        Some(prefixed[0])
    } else {
        ids.iter()
            .map(|id| (edit_distance(id, given), id.as_str()))
            .filter(|(d, _)| *d <= 3)
            .min()
            .map(|(_, id)| id)
    };
    match near {
        Some(id) => err.hint(format!("did you mean {id}?")),
        None => err.hint("`discuss list` shows the discussions in this ledger"),
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// `--payload JSON | --payload-file PATH|-`, shared by `ask` and `reply`.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct PayloadArgs {
    /// The message body as JSON (any JSON value)
    #[arg(long, value_name = "JSON")]
    pub payload: Option<String>,
    /// Read the JSON body from a file, or from stdin with `-`
    #[arg(long, value_name = "PATH|-")]
    pub payload_file: Option<PathBuf>,
}

impl PayloadArgs {
    pub fn read(&self) -> Result<String> {
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

/// `-q`/`--quiet`, shared by `ask`, `wake`, `list` and `inbox`.
#[derive(Debug, Args)]
pub struct QuietArgs {
    /// Print only the ids (the new discussion, the new attempt, or one
    /// listed discussion a line), also with --json
    #[arg(short, long)]
    pub quiet: bool,
}

/// `--idempotency-key`, shared by `ask`, `wake` and `reply`.
#[derive(Debug, Args)]
pub struct IdempotencyArgs {
    /// Makes the write safe to retry: the same key with the same arguments
    /// answers the original result ("replayed": true) and writes nothing;
    /// with other arguments it is refused (idempotency_conflict)
    #[arg(long, value_name = "KEY")]
    pub idempotency_key: Option<String>,
}

impl IdempotencyArgs {
    /// The key, checked before the ledger is touched.
    pub fn key(&self) -> Result<Option<&str>> {
        if let Some(key) = &self.idempotency_key {
            crate::engine::idempotency::check_key(key)?;
        }
        Ok(self.idempotency_key.as_deref())
    }
}

/// A retry-safe write (`--idempotency-key`): under the writer lock, an
/// earlier operation under `key` is answered by `replay` (the same
/// request) or refused (another request, `idempotency_conflict`), writing
/// nothing; else `plan` decides the records, and the first carries the key.
/// Returns the answer and whether it was replayed.
pub fn write_once<T>(
    ctx: &Context,
    discussion_ids: &[&str],
    key: Option<&str>,
    digest: &str,
    replay: impl FnOnce(&crate::ledger::Keyed) -> Result<T>,
    plan: impl FnOnce(&View) -> Result<(Vec<crate::ledger::Record>, T)>,
) -> Result<(T, bool)> {
    use crate::engine::idempotency;
    let tag = idempotency::tag(key, digest);
    ctx.ledger.append_keyed(discussion_ids, key, |view| {
        if let Some(earlier) = idempotency::earlier(view.keyed(), tag.as_ref())? {
            return Ok((Vec::new(), (replay(earlier)?, true)));
        }
        let (mut records, answer) = plan(view)?;
        idempotency::mark(&mut records, tag);
        Ok((records, (answer, false)))
    })
}

/// Options of a supervised run (`-- CMD`), shared by `wake` and `ask`.
#[derive(Debug, Args)]
pub struct SuperviseArgs {
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
    pub fn options(&self) -> Result<Option<crate::supervisor::Options>> {
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
pub fn read_input(path: &std::path::Path, limit: usize) -> Result<String> {
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

/// Runs the parsed command and shows its answer through the output
/// layer; the exit status on success.
pub fn run(cli: &Cli, out: Output) -> Result<u8> {
    let ctx = match &cli.command {
        // Neither needs a ledger.
        Command::Completions { shell } => {
            out.print_text(&String::from_utf8_lossy(&crate::assets::completion(*shell)));
            return Ok(0);
        }
        // Answers go out as MCP messages, errors as JSON: never human text.
        Command::Mcp(args) => return mcp::run(Context::new(&cli.global, out.as_json())?, args),
        Command::Call(_) => Context::new(&cli.global, out.as_json())?,
        _ => Context::new(&cli.global, out)?,
    };
    let answer = match &cli.command {
        Command::Fleet(args) => fleet::run(&ctx, args)?,
        Command::Ask(args) => ask::run(&ctx, args)?,
        Command::Wake(args) => wake::run(&ctx, args)?,
        Command::Reply(args) => reply::run(&ctx, args)?,
        Command::Show(args) => show::run(&ctx, args)?,
        Command::KillSwitch(args) => kill_switch::run(&ctx, args)?,
        Command::Quota(args) => quota::run(&ctx, args)?,
        Command::Call(args) => call::run(&ctx, args)?,
        Command::List(args) => list::run(&ctx, args)?,
        Command::Inbox(args) => list::inbox(&ctx, args)?,
        Command::Verify(args) => verify::run(&ctx, args)?,
        Command::Wait(args) => wait::run(&ctx, args)?,
        Command::Events(args) => events::run(&ctx, args)?,
        Command::Ledger(args) => ledger::run(&ctx, args)?,
        // Answered above.
        Command::Completions { .. } | Command::Mcp(_) => Answer::streamed(0),
    };
    ctx.out.emit(&answer);
    Ok(answer.status)
}
