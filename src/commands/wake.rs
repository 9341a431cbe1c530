//! `discuss wake`: the seed's `wake_agent`.

use super::{Context, SuperviseArgs};
use crate::clock::format_ms;
use crate::discussion::{Attempt, Discussion};
use crate::engine::{WakeRequest, idempotency, plan_wake};
use crate::error::Result;
use crate::output::attempt_json;
use clap::Args;
use serde_json::{Value, json};

/// Reserve one turn for the recipient of the head: atomic, budgeted.
///
/// Charges one turn whatever the outcome. Without a command it only
/// reserves and prints the attempt; the agent then answers with `reply`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss wake --agent agent-b --discussion dsc_… --expected-head msg_…"
)]
pub struct WakeArgs {
    /// The agent to wake: the recipient of the head
    #[arg(long, value_name = "AGENT")]
    pub agent: String,
    /// The discussion
    #[arg(long, value_name = "DSC")]
    pub discussion: String,
    /// The head message the caller saw; refused as stale_head if it moved
    #[arg(long, value_name = "MSG")]
    pub expected_head: String,
    #[command(flatten)]
    pub idempotency: super::IdempotencyArgs,
    #[command(flatten)]
    pub quiet: super::QuietArgs,
    #[command(flatten)]
    pub supervise: SuperviseArgs,
}

pub fn run(ctx: &Context, args: &WakeArgs) -> Result<u8> {
    let discussion = super::resolve_discussion(ctx, &args.discussion)?;
    let request = WakeRequest::new(&args.agent, &discussion, &args.expected_head)?;
    let supervise = args.supervise.options()?;
    let key = args.idempotency.key()?;
    let reserved_at = std::time::Instant::now();
    let (discussion, attempt, replayed) = perform(ctx, &request, key)?;
    let quiet = || ctx.out.print_text(&format!("{}\n", attempt.attempt_id));
    if replayed && args.quiet.quiet {
        quiet();
        return Ok(0);
    }
    if replayed {
        // A retry: the original reservation, and no second run of the agent.
        return super::ask::print_replayed(ctx, &to_json(&discussion, &attempt), || {
            format!(
                "{} holds turn {} of {} until {}\nattempt {}\n",
                attempt.agent_id,
                attempt.turn,
                discussion.id,
                format_ms(attempt.deadline_ms),
                attempt.attempt_id
            )
        });
    }
    if let Some(options) = supervise {
        let outcome = crate::supervisor::run(ctx, &discussion, &attempt, &options, reserved_at)?;
        if args.quiet.quiet {
            quiet();
        } else if ctx.out.json {
            ctx.out
                .print_json(&json!({"discussion_id": discussion.id, "attempt": outcome.to_json()}));
        } else {
            ctx.out
                .print_text(&supervised_human(&discussion.id, &outcome));
        }
        return Ok(outcome.exit_status());
    }
    if args.quiet.quiet {
        quiet();
    } else if ctx.out.json {
        ctx.out.print_json(&to_json(&discussion, &attempt));
    } else {
        ctx.out.print_text(&format!(
            "{} holds turn {} of {} until {}\nattempt {}\nreply: discuss reply --agent {} --discussion {} --attempt {} --reply-to {} --type result --payload JSON\n",
            attempt.agent_id,
            attempt.turn,
            discussion.id,
            format_ms(attempt.deadline_ms),
            attempt.attempt_id,
            attempt.agent_id,
            discussion.id,
            attempt.attempt_id,
            attempt.head_message_id,
        ));
    }
    Ok(0)
}

/// Reserves the attempt; with an idempotency key already used for this
/// very request, writes nothing and answers the original (`true` =
/// replayed).
pub fn perform(
    ctx: &Context,
    request: &WakeRequest,
    key: Option<&str>,
) -> Result<(Discussion, Attempt, bool)> {
    let ((discussion, attempt), replayed) = super::write_once(
        ctx,
        &[&request.discussion_id],
        key,
        &request.digest,
        |earlier| {
            let discussion = idempotency::as_written(earlier)?;
            let attempt = match &earlier.first.body {
                crate::ledger::Body::Receipt(r) => r.attempt_id.as_deref(),
                _ => None,
            }
            .and_then(|id| discussion.attempt(id).cloned())
            .ok_or_else(|| {
                crate::error::Error::new(
                    crate::error::ErrorCode::Internal,
                    "the record of an idempotency key holds no reservation",
                )
            })?;
            Ok((discussion, attempt))
        },
        |view| {
            plan_wake(
                &view.global(ctx.now(view.last_at_ms())),
                &view.discussion(&request.discussion_id),
                request,
                &ctx.stamp(view.last_at_ms()),
            )
        },
    )
    .map_err(|err| super::near_match(err, ctx, &request.discussion_id))?;
    Ok((discussion, attempt, replayed))
}

pub fn to_json(discussion: &Discussion, attempt: &Attempt) -> Value {
    json!({"discussion_id": discussion.id, "attempt": attempt_json(attempt)})
}

/// One line on how a supervised attempt ended.
pub fn supervised_human(discussion_id: &str, outcome: &crate::supervisor::Outcome) -> String {
    let a = &outcome.attempt;
    let mut line = format!(
        "{discussion_id} turn {} ({}): {}",
        a.turn, a.agent_id, outcome.outcome
    );
    if let Some(reason) = &outcome.reason {
        // The code for scripts, and what happened for the person reading.
        match &a.detail {
            Some(detail) => line.push_str(&format!(" ({reason}: {detail})")),
            None => line.push_str(&format!(" ({reason})")),
        }
    }
    if let Some(code) = outcome.exit_code {
        line.push_str(&format!(", exit code {code}"));
    }
    if let Some(message) = &outcome.reply_message_id {
        line.push_str(&format!(", reply {message}"));
    }
    line.push('\n');
    line
}
