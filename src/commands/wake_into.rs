//! `discuss wake --into tmux:PANE`: the same reservation as `wake`, then
//! one pointer typed into the live session's pane once it is quiet, and
//! (with `--wait`) the turn watched to its end.

use super::Context;
use crate::discussion::{Attempt, AttemptState, Discussion};
use crate::engine::{AttemptEnd, EndReason, WakeRequest};
use crate::error::{Error, ErrorCode, Result};
use crate::live::Pointer;
use crate::live::tmux::{NotTyped, Tmux};
use crate::operations;
use crate::output::{Answer, WakeView};
use std::time::Duration;

/// `wake`'s options for a live session.
#[derive(Debug, clap::Args)]
pub(crate) struct IntoArgs {
    /// Tell a live session of the turn: type one pointer line into this
    /// tmux pane (tmux:%12, tmux:work:2.1), never the body
    #[arg(long, value_name = "tmux:PANE", conflicts_with = "command")]
    pub into: Option<String>,
    /// With --into: the tmux server's socket (tmux -S)
    #[arg(long, value_name = "PATH", requires = "into")]
    pub tmux_socket: Option<std::path::PathBuf>,
    /// With --into: how long the pane must be unchanged before typing, in
    /// ms (0..60000)
    #[arg(long, value_name = "N", default_value_t = 500, requires = "into")]
    pub quiet_ms: u64,
    /// With --into: the pointer's text ({turn}, {discussion},
    /// {deadline_at}, {agent}, {attempt})
    #[arg(long, value_name = "TEMPLATE", requires = "into")]
    pub into_text: Option<String>,
    /// With --into: stay until the turn ends, and exit as a supervised run
    /// does (0 completed, 8 failed, 9 deadman)
    #[arg(long, requires = "into")]
    pub wait: bool,
}

/// The longest a pane may stay busy before the delivery fails.
const MOST_QUIET_WAIT: Duration = Duration::from_secs(60);
/// How often `--wait` looks at the turn (and at the halts that cover it).
const WAIT_POLL: Duration = Duration::from_millis(100);

pub(crate) fn run(
    ctx: &Context,
    args: &IntoArgs,
    into: &str,
    request: WakeRequest,
    key: Option<&str>,
    wait_approval: bool,
) -> Result<Answer> {
    // Every input first, the pane included: nothing is charged for a
    // typo in a target.
    let Some(target) = into.strip_prefix("tmux:").filter(|t| !t.is_empty()) else {
        return Err(Error::usage(
            format!(
                "--into takes tmux:PANE, not {}",
                crate::escape::printable(into, false)
            ),
            "discuss wake … --into tmux:PANE".into(),
        )
        .hint("e.g. --into tmux:%12 or --into tmux:work:2.1"));
    };
    crate::discussion::envelope::check_range("quiet_ms", args.quiet_ms as i64, (0, 60_000))?;
    let pointer = match &args.into_text {
        Some(template) => Pointer::parse(template)?,
        None => Pointer::default(),
    };
    let tmux = Tmux {
        socket: args.tmux_socket.clone(),
    };
    let pane = tmux.pane_id(target)?;
    let request = request.into(Some(format!("tmux:{pane}")));
    let (discussion, attempt, replayed) =
        operations::wake::wake(ctx, &request, key, wait_approval)?;
    // A retry of a wake already made: its answer, nothing typed again.
    if replayed {
        return Ok(Answer::new(WakeView {
            discussion_id: discussion.id,
            attempt,
            supervised: None,
            replayed,
        }));
    }
    let left = Duration::from_millis((attempt.deadline_ms - ctx.now(None)).max(0) as u64);
    let typed = tmux
        .wait_quiet(
            &pane,
            Duration::from_millis(args.quiet_ms),
            (left / 2).min(MOST_QUIET_WAIT),
        )
        .and_then(|()| tmux.type_line(&pane, &pointer.render(&discussion.id, &attempt)));
    if let Err(not_typed) = typed {
        return Err(delivery_failed(
            ctx,
            &discussion,
            &attempt,
            &pane,
            &not_typed,
        ));
    }
    let discussion = operations::live::delivered(ctx, &discussion.id, &attempt.attempt_id)?
        .unwrap_or(discussion);
    let attempt = discussion
        .attempt(&attempt.attempt_id)
        .cloned()
        .unwrap_or(attempt);
    let supervised = if args.wait {
        Some(watch(ctx, &tmux, &pane, &discussion, &attempt)?)
    } else {
        None
    };
    Ok(Answer::new(WakeView {
        discussion_id: discussion.id,
        attempt,
        supervised,
        replayed,
    }))
}

/// Ends the turn `failed` (`delivery_failed`: charged, never retried)
/// and answers the error that says so (exit 8).
fn delivery_failed(
    ctx: &Context,
    discussion: &Discussion,
    attempt: &Attempt,
    pane: &str,
    not_typed: &NotTyped,
) -> Error {
    let detail = not_typed.detail();
    let end = AttemptEnd {
        reason: EndReason::DeliveryFailed,
        exit_code: None,
        signal: None,
        detail: Some(detail.clone()),
        usage: None,
        usage_unreadable: false,
    };
    let recorded = crate::supervisor::finish(ctx, discussion, attempt, end);
    let mut error = Error::new(
        ErrorCode::DeliveryFailed,
        format!(
            "turn {} of {} was not delivered to tmux:{pane}: {detail}; the turn ended failed",
            attempt.turn, discussion.id
        ),
    )
    .detail("discussion_id", discussion.id.as_str())
    .detail("attempt_id", attempt.attempt_id.as_str())
    .detail("into", format!("tmux:{pane}"))
    .hint(format!("see it: `discuss show {}`", discussion.id));
    if let Err(err) = recorded {
        error = error.detail("recorded", false).hint(format!(
            "its end could not be recorded ({}); it lapses at its deadline",
            err.message
        ));
    }
    error
}

/// `--wait`: watches the turn until it ends, as a supervisor would; a
/// halt that covers it ends it `failed` (`kill_switch`), and the session
/// is told once that the turn was withdrawn.
fn watch(
    ctx: &Context,
    tmux: &Tmux,
    pane: &str,
    discussion: &Discussion,
    attempt: &Attempt,
) -> Result<crate::supervisor::Outcome> {
    loop {
        let (now, _, halt) = operations::read::load_with_halt(ctx, &discussion.id)?;
        let current = now.attempt(&attempt.attempt_id).cloned();
        let live = current
            .as_ref()
            .is_some_and(|a| matches!(a.state, AttemptState::Reserved | AttemptState::Started));
        let reason = match (&halt, live) {
            (_, false) => EndReason::Deadline,
            (Some(_), true) => EndReason::KillSwitch,
            (None, true) => {
                std::thread::sleep(WAIT_POLL);
                continue;
            }
        };
        let end = AttemptEnd {
            reason,
            exit_code: None,
            signal: None,
            detail: None,
            usage: None,
            usage_unreadable: false,
        };
        let outcome = crate::supervisor::finish(ctx, &now, attempt, end)?;
        if reason == EndReason::KillSwitch && outcome.attempt.state == AttemptState::Failed {
            let line = crate::live::withdrawn(&discussion.id, attempt, "halted");
            // The session is told if it can be; the turn is ended anyway.
            let _ = tmux.type_line(pane, &line);
        }
        return Ok(outcome);
    }
}
