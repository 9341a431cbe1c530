//! Supervised attempts (`wake -- CMD`, `ask --wake-peer -- CMD`): run the
//! woken agent's command for exactly its turn and record how it ended.
//!
//! The child runs in the process group of a guardian (`guardian.rs`) that
//! kills the whole group should the supervisor die; the child itself also
//! dies with the supervisor (parent-death signal). The supervisor is a
//! child subreaper, so grandchildren orphaned by the child are reaped here
//! rather than left as zombies elsewhere. The turn is measured with the
//! monotonic clock from the reservation, by a watchdog thread
//! (`watchdog.rs`) that never waits for the ledger lock.

pub(crate) mod guardian;
pub(crate) mod handoff;
mod output;
mod watchdog;

use crate::discussion::{Attempt, AttemptState, Discussion, derive};
use crate::engine::{AttemptEnd, EndReason, plan_attempt_end, plan_started};
use crate::error::{Error, ErrorCode, Result};
use crate::operations::watch::{Changes, every};
use crate::session::Session;
use guardian::Guardian;
pub(crate) use output::{UsageReport, read_usage_file};
use output::{capture, reply_from_stdout};
use rustix::process::{Pid, Signal, WaitOptions};
use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use watchdog::{SIGNALLED, Watchdog};

/// How often the child, the clock and the ledger's size are looked at.
pub(crate) const POLL: Duration = Duration::from_millis(20);

#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub command: Vec<String>,
    pub kill_grace: Duration,
    pub reply_from_stdout: bool,
    pub close_on_reply: bool,
    /// `Some(names)`: start the command with only the variables of
    /// `CLEAN_ENV_KEEPS`, the `DISCUSS_*` ones and `names`.
    pub clean_env: Option<Vec<String>>,
}

/// What `--clean-env` passes on besides `DISCUSS_*` and `--env NAME`.
pub(crate) const CLEAN_ENV_KEEPS: [&str; 4] = ["PATH", "HOME", "LANG", "TERM"];

/// How a supervised attempt ended, as the ledger has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The agent replied.
    Completed,
    /// It ended without a reply before its deadline.
    Failed,
    /// Its deadline came first.
    Deadman,
}

impl Ended {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Ended::Completed => "completed",
            Ended::Failed => "failed",
            Ended::Deadman => "deadman",
        }
    }

    /// The command's exit status (`error.rs`, with the errors' own).
    pub(crate) fn exit_status(self) -> u8 {
        match self {
            Ended::Completed => 0,
            Ended::Failed => crate::error::EXIT_TURN_FAILED,
            Ended::Deadman => crate::error::EXIT_TURN_DEADMAN,
        }
    }
}

/// How the supervised attempt ended.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    pub attempt: Attempt,
    pub outcome: Ended,
    /// The reason its end receipt gives (the ledger's text).
    pub reason: Option<String>,
    pub exit_code: Option<i32>,
    pub reply_message_id: Option<String>,
    /// The discussion's status once the turn was recorded, and the reason
    /// of its escalation when the turn's end escalated it.
    pub status: Option<crate::discussion::Status>,
    pub escalated: Option<String>,
}

impl Outcome {
    pub(crate) fn exit_status(&self) -> u8 {
        self.outcome.exit_status()
    }
}

/// Installs the stop-signal handlers (SIGINT, SIGTERM, SIGHUP): the
/// deliverer finishes its command in flight, then stops.
pub(crate) fn catch_stop_signals() -> Result<()> {
    catch_signals()
}

/// A stop signal has come since `catch_stop_signals`.
pub(crate) fn stop_requested() -> bool {
    SIGNALLED.load(Ordering::SeqCst) != 0
}

extern "C" fn on_signal(signal: libc::c_int) {
    SIGNALLED.store(signal, Ordering::SeqCst);
}

/// SIGINT, SIGTERM and SIGHUP to the supervisor end the attempt cleanly;
/// orphaned grandchildren are re-parented here to be reaped.
fn catch_signals() -> Result<()> {
    // SAFETY: installing a handler has no safe API (rustix has none); the
    // handler only stores to an atomic, which is async-signal-safe, and the
    // struct is zeroed then filled as sigaction(2) asks.
    let installed = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        [libc::SIGINT, libc::SIGTERM, libc::SIGHUP]
            .into_iter()
            .all(|signal| libc::sigaction(signal, &action, std::ptr::null_mut()) == 0)
    };
    if !installed {
        return Err(Error::io(
            "installing the signal handlers",
            &std::io::Error::last_os_error(),
        ));
    }
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
        .map_err(|e| Error::io("becoming a child subreaper", &e.into()))
}

/// Runs the command for `attempt`, reserved at `reserved_at` (monotonic),
/// in a span `invoke_agent {agent}` (the GenAI conventions' span of one
/// agent's turn) whose `traceparent` the child gets as `TRACEPARENT`.
pub(crate) fn run(
    session: &Session,
    discussion: &Discussion,
    attempt: &Attempt,
    options: &Options,
    reserved_at: Instant,
) -> Result<Outcome> {
    use crate::traces::{Parent, start};
    let span = start(
        format!("invoke_agent {}", attempt.agent_id),
        opentelemetry::trace::SpanKind::Internal,
        Parent::Inherited,
    );
    if span.is_on() {
        span.set("gen_ai.operation.name", "invoke_agent");
        span.set("gen_ai.agent.id", attempt.agent_id.clone());
        span.set("gen_ai.agent.name", attempt.agent_id.clone());
        span.set("gen_ai.conversation.id", discussion.id.clone());
        span.set("discuss.discussion_id", discussion.id.clone());
        span.set("discuss.turn", i64::from(attempt.turn));
        span.set("discuss.attempt_id", attempt.attempt_id.clone());
    }
    let outcome = run_turn(
        session,
        discussion,
        attempt,
        options,
        reserved_at,
        span.traceparent(),
    );
    match &outcome {
        Ok(outcome) if span.is_on() => {
            span.set("discuss.attempt.state", outcome.outcome.as_str());
            if let Some(reason) = &outcome.reason {
                span.set("discuss.attempt.reason", reason.clone());
            }
            if let Some(usage) = &outcome.attempt.usage {
                let tokens = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
                if let Some(input) = usage.input_tokens {
                    span.set("gen_ai.usage.input_tokens", tokens(input));
                }
                if let Some(output) = usage.output_tokens {
                    span.set("gen_ai.usage.output_tokens", tokens(output));
                }
                if let Some(cost) = usage.cost_usd {
                    span.set("discuss.cost_usd", cost.to_json().as_f64().unwrap_or(0.0));
                }
            }
            if outcome.outcome != Ended::Completed {
                span.fail(outcome.outcome.as_str());
            }
        }
        Err(err) => span.fail(err.code.as_str()),
        Ok(_) => {}
    }
    outcome
}

/// One turn, its steps in the order that is its guarantee: spawn under
/// the guardian, record `started`, watch the child and the halts, stand
/// the watchdog down before the group is killed, record the end once the
/// ledger answers. Long on purpose: each step's clean-up depends on what
/// the steps before it hold.
fn run_turn(
    session: &Session,
    discussion: &Discussion,
    attempt: &Attempt,
    options: &Options,
    reserved_at: Instant,
    traceparent: Option<String>,
) -> Result<Outcome> {
    catch_signals()?;
    let turn = Duration::from_millis((attempt.deadline_ms - attempt.reserved_at_ms).max(0) as u64);
    let deadline = reserved_at + turn;
    let head_body = discussion
        .head()
        .map(|h| h.body.to_string())
        .unwrap_or_default();

    // Where the child may say what its turn cost; gone with the run.
    let usage_dir = tempfile::Builder::new()
        .prefix("discuss-usage-")
        .tempdir()
        .map_err(|e| Error::io("making the usage file's directory", &e))?;
    let usage_file = usage_dir.path().join("usage.json");
    let spawned = Guardian::start().and_then(|guardian| {
        match spawn(
            session,
            discussion,
            attempt,
            options,
            guardian.group(),
            &usage_file,
            traceparent.as_deref(),
        ) {
            Ok(child) => Ok((guardian, child)),
            Err(err) => {
                kill_group(guardian.group(), Signal::KILL);
                guardian.reap();
                Err(err)
            }
        }
    });
    let (guardian, mut child) = match spawned {
        Ok(spawned) => spawned,
        Err(err) => {
            let end = AttemptEnd {
                usage_unreadable: false,
                reason: EndReason::SpawnFailed,
                exit_code: None,
                signal: None,
                detail: Some(format!("{}: {err}", options.command[0])),
                usage: None,
            };
            return finish(session, discussion, attempt, end);
        }
    };
    let group = guardian.group();
    // From here the deadline is kept whatever the main thread waits for.
    let watchdog = Watchdog::start(group, deadline, options.kill_grace);
    // Every change from here on is looked at, `started`'s own included: a
    // halt engaged just after it is seen on the first tick.
    let mut changes = Changes::unseen();
    match record_started(session, discussion, attempt, child.id()) {
        // A halt engaged since the reservation: the agent is stopped
        // before it does anything, and the turn ends `kill_switch`.
        Err(err) if err.code == ErrorCode::KillSwitchEngaged => {
            watchdog.fire(EndReason::KillSwitch)
        }
        Err(err) => {
            watchdog.fire(EndReason::Interrupted);
            let _ = child.wait();
            watchdog.stand_down();
            kill_group(group, Signal::KILL);
            guardian.reap();
            return Err(err);
        }
        Ok(()) => {}
    }

    // Feed stdin and drain a captured stdout on their own threads, so a
    // child that reads or writes nothing never blocks the supervisor.
    if let Some(mut stdin) = child.stdin.take() {
        std::thread::spawn(move || {
            let _ = stdin
                .write_all(head_body.as_bytes())
                .and_then(|()| stdin.write_all(b"\n"));
        });
    }
    let captured = child
        .stdout
        .take()
        .map(|stdout| std::thread::spawn(move || capture(stdout)));

    // What a switch must cover to kill this turn: the global one, the
    // discussion's fleet, either participant, the discussion itself.
    let covered = discussion.covered();
    let status = every(POLL, || {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| Error::io("waiting for the child", &e))?
        {
            return Ok(Some(status));
        }
        // Look at the ledger only when it has changed, and never wait for
        // its lock: a busy ledger is looked at on a later tick.
        if let Some(version) = changes.fresh(session)
            && watchdog.fired().is_none()
        {
            // A database that cannot be reached (a restart, a failover)
            // does not end the turn: the agent keeps running and the
            // ledger is looked at again on the next tick.
            match ride_out(session, session.ledger.view_within(&[], Instant::now()))? {
                Some(Some(view))
                    if view
                        .global(session.now(view.last_at_ms()))
                        .halt_of(covered)
                        .is_some() =>
                {
                    watchdog.fire(EndReason::KillSwitch)
                }
                Some(Some(_)) => changes.seen(version),
                Some(None) | None => {}
            }
        }
        Ok(None)
    })?;
    // The watchdog stands down before the group is killed, so no signal of
    // its own can reach a group id the kernel has handed on.
    let fired = watchdog.stand_down();
    kill_group(group, Signal::KILL);
    guardian.reap();
    let ending = match fired {
        Some(reason) => Ending::Killed {
            reason,
            status: Some(status),
        },
        None => Ending::Exited(status),
    };
    reap_orphans();
    let stdout = captured.and_then(|handle| handle.join().ok());

    let (status, mut end) = match ending {
        Ending::Killed { reason, status } => {
            let end = AttemptEnd {
                usage_unreadable: false,
                reason,
                exit_code: status.and_then(|s| s.code()),
                signal: status.and_then(|s| s.signal()),
                detail: None,
                usage: None,
            };
            (status, end)
        }
        Ending::Exited(status) => {
            let end = AttemptEnd {
                usage_unreadable: false,
                reason: EndReason::ExitedWithoutReply,
                exit_code: status.code(),
                signal: status.signal(),
                detail: None,
                usage: None,
            };
            (Some(status), end)
        }
    };
    // The end is recorded once the ledger answers again, however long
    // after the turn that is (bounded: a ledger gone for good is an error).
    let until = deadline.max(Instant::now()) + RIDE_OUT;
    let replied = retrying(session, until, || {
        current_attempt(session, discussion, attempt)
    })?
    .state
        == AttemptState::Completed;
    // A reply took the usage file with it (`discuss reply` reads it): it
    // is read here, and said to be bad here, only for a turn without one.
    if !replied {
        match read_usage_file(&usage_file) {
            UsageReport::Read(usage) => end.usage = Some(usage),
            UsageReport::Unreadable => end.usage_unreadable = true,
            UsageReport::None => {}
        }
    }
    if !replied
        && options.reply_from_stdout
        && status.is_some_and(|s| s.success())
        && end.reason == EndReason::ExitedWithoutReply
    {
        return reply_from_stdout(
            session,
            discussion,
            attempt,
            options,
            stdout.unwrap_or_default(),
            end,
        );
    }
    retrying(session, until, || {
        finish(session, discussion, attempt, end.clone())
    })
}

/// Records that the agent `pid` runs the turn; `kill_switch_engaged` when
/// a halt that covers the discussion was engaged since its reservation.
fn record_started(
    session: &Session,
    discussion: &Discussion,
    attempt: &Attempt,
    pid: u32,
) -> Result<()> {
    let _ = crate::ledger::failpoint("supervisor.before_started");
    session.ledger.append(&[&discussion.id], |view| {
        let stamp = session.stamp(view.last_at_ms());
        plan_started(
            &view.global(stamp.at_ms),
            &discussion.id,
            &attempt.attempt_id,
            pid,
            &view.discussion(&discussion.id),
            &stamp,
        )
    })
}

/// How long after a turn's deadline a supervisor waits for an unreachable
/// ledger to record how the turn ended.
const RIDE_OUT: Duration = Duration::from_secs(120);

/// `Ok(None)` for a ledger that cannot be reached (said once on stderr),
/// else the result as it is.
fn ride_out<T>(session: &Session, result: Result<T>) -> Result<Option<T>> {
    match result {
        Ok(got) => Ok(Some(got)),
        Err(err) if err.code == ErrorCode::LedgerUnavailable => {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                say!(
                    "note: {} cannot be reached; the agent keeps running, and its turn is recorded once the ledger answers",
                    session.ledger.location()
                );
            });
            Ok(None)
        }
        Err(err) => Err(err),
    }
}

/// `step` again every half second while the ledger cannot be reached,
/// until `until`.
fn retrying<T>(
    session: &Session,
    until: Instant,
    mut step: impl FnMut() -> Result<T>,
) -> Result<T> {
    loop {
        match step() {
            Err(err) if err.code == ErrorCode::LedgerUnavailable && Instant::now() < until => {
                let _ = ride_out::<()>(session, Err(err));
                std::thread::sleep(Duration::from_millis(500));
            }
            result => return result,
        }
    }
}

enum Ending {
    Exited(ExitStatus),
    Killed {
        reason: EndReason,
        status: Option<ExitStatus>,
    },
}

fn spawn(
    session: &Session,
    discussion: &Discussion,
    attempt: &Attempt,
    options: &Options,
    group: Pid,
    usage_file: &Path,
    traceparent: Option<&str>,
) -> std::io::Result<Child> {
    let ledger = session.ledger.for_child()?;
    let mut command = Command::new(&options.command[0]);
    if let Some(names) = &options.clean_env {
        // The child would otherwise inherit every secret of this
        // environment; keep only what an agent needs to start.
        command.env_clear();
        for (name, value) in std::env::vars_os() {
            let text = name.to_string_lossy();
            let keep = CLEAN_ENV_KEEPS.contains(&text.as_ref())
                || text.starts_with("DISCUSS_")
                || names.iter().any(|n| *n == text);
            if keep {
                command.env(&name, value);
            }
        }
    }
    command
        .args(&options.command[1..])
        .env("DISCUSS_LEDGER", ledger)
        .env("DISCUSS_DISCUSSION_ID", &discussion.id)
        .env("DISCUSS_ATTEMPT_ID", &attempt.attempt_id)
        .env("DISCUSS_AGENT_ID", &attempt.agent_id)
        .env("DISCUSS_REPLY_TO", &attempt.head_message_id)
        .env("DISCUSS_TURN", attempt.turn.to_string())
        .env("DISCUSS_USAGE_FILE", usage_file)
        .env(
            "DISCUSS_DEADLINE_AT",
            crate::clock::format_ms(attempt.deadline_ms),
        )
        .stdin(Stdio::piped())
        .stderr(Stdio::from(std::io::stderr().as_fd().try_clone_to_owned()?))
        .process_group(group.as_raw_nonzero().get());
    // The agent's `discuss reply` finds this very binary, however this one
    // was started (`target/release/discuss wake … -- ./agent.sh` found
    // no `discuss` on the child's PATH: exit 127, a turn spent).
    if let Ok(binary) = std::env::current_exe()
        && let Some(folder) = binary.parent()
    {
        // Last on the PATH: a `discuss` the caller's PATH names first (a
        // wrapper, say) is still the one run. (`--clean-env` keeps PATH.)
        // Without a PATH of its own, the search path the C library takes
        // then (`_CS_PATH`).
        let mut path = std::env::var_os("PATH")
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "/bin:/usr/bin".into());
        path.push(":");
        path.push(folder);
        command.env("DISCUSS_BIN", &binary).env("PATH", path);
    }
    if session.ledger.network_fs_allowed() {
        command.env("DISCUSS_ALLOW_NETWORK_FS", "true");
    }
    if let Some(traceparent) = traceparent {
        // The turn's span (W3C): the agent's own spans nest under it.
        command.env("TRACEPARENT", traceparent);
    }
    if std::env::var_os("DISCUSS_NOW").is_some() {
        // A pinned clock carries on in the child from where ours is now.
        command.env("DISCUSS_NOW", session.clock.now_ms().to_string());
    }
    if options.reply_from_stdout {
        command.stdout(Stdio::piped());
    } else {
        command.stdout(Stdio::from(std::io::stderr().as_fd().try_clone_to_owned()?));
    }
    dies_with_this_process(&mut command);
    command.spawn()
}

/// Makes the command's process get SIGKILL when this one dies, and never
/// start if this one died before that could be set.
pub(crate) fn dies_with_this_process(command: &mut Command) {
    let parent = rustix::process::getpid();
    // SAFETY: pre_exec itself is unsafe (the closure runs between fork and
    // exec); it makes only raw system calls through rustix (prctl,
    // getppid), which are async-signal-safe, and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
            if rustix::process::getppid() != Some(parent) {
                // This process died before the death signal was set: the
                // spawn fails, and the child never runs.
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            Ok(())
        });
    }
}

pub(crate) fn kill_group(pgid: Pid, signal: Signal) {
    // ESRCH (the group is gone already) is what is wanted.
    let _ = rustix::process::kill_process_group(pgid, signal);
}

/// Reaps grandchildren re-parented to us (we are a subreaper) until none
/// are left or a second has passed.
fn reap_orphans() {
    let until = Instant::now() + Duration::from_secs(1);
    loop {
        match rustix::process::wait(WaitOptions::NOHANG) {
            Err(_) => return, // ECHILD: nothing left
            Ok(None) if Instant::now() >= until => return,
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Ok(Some(_)) => {}
        }
    }
}

fn current_attempt(
    session: &Session,
    discussion: &Discussion,
    attempt: &Attempt,
) -> Result<Attempt> {
    let view = session.ledger.view(&[&discussion.id])?;
    let state = derive(
        &discussion.id,
        &view.discussion(&discussion.id),
        session.now(view.last_at_ms()),
    );
    Ok(state
        .and_then(|d| d.attempt(&attempt.attempt_id).cloned())
        .unwrap_or_else(|| attempt.clone()))
}

/// Records the end (unless the attempt completed) and reports the outcome
/// from the ledger's point of view.
pub(crate) fn finish(
    session: &Session,
    discussion: &Discussion,
    attempt: &Attempt,
    end: AttemptEnd,
) -> Result<Outcome> {
    let state = session.ledger.append(&[&discussion.id], |view| {
        plan_attempt_end(
            &discussion.id,
            &attempt.attempt_id,
            &end,
            &view.discussion(&discussion.id),
            &session.stamp(view.last_at_ms()),
        )
    })?;
    let status = state.as_ref().map(|d| d.status);
    let escalated = state
        .as_ref()
        .and_then(|d| d.escalation.as_ref())
        .map(|e| e.reason.clone());
    let current = state
        .and_then(|d| d.attempt(&attempt.attempt_id).cloned())
        .unwrap_or_else(|| attempt.clone());
    let outcome = match current.state {
        AttemptState::Completed => Ended::Completed,
        AttemptState::Deadman => Ended::Deadman,
        _ => Ended::Failed,
    };
    Ok(Outcome {
        reason: if outcome == Ended::Completed {
            None
        } else {
            current.reason.clone()
        },
        exit_code: current.exit_code.or(end.exit_code),
        reply_message_id: current.reply_message_id.clone(),
        attempt: current,
        outcome,
        status,
        escalated,
    })
}
