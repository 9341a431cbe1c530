//! `discuss ask`: the seed's `ask_peer`.

use super::{Context, PayloadArgs, SuperviseArgs};
use crate::engine::{AskOutcome, AskRequest, idempotency, plan_ask};
use crate::error::Result;
use crate::ledger::record::RESERVED;
use crate::output::{attempt_json, policy_json};
use clap::Args;
use serde_json::{Value, json};

/// Start a discussion: the root message (turn 1) from --from to --to.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss ask --from agent-a --to agent-b --fleet fleet-alpha \\\n    \
    --payload '{\"body\":\"Refactor auth module?\"}' --max-turns 4"
)]
pub struct AskArgs {
    /// The asking agent
    #[arg(long, value_name = "AGENT")]
    pub from: String,
    /// The peer (exactly one: group discussions are refused)
    #[arg(long, value_name = "AGENT", num_args = 1.., required = true)]
    pub to: Vec<String>,
    /// The fleet both agents belong to
    #[arg(long, value_name = "FLEET")]
    pub fleet: String,
    #[command(flatten)]
    pub payload: PayloadArgs,
    /// Turn budget, the root included (2 to 32)
    #[arg(long, default_value_t = 4, allow_negative_numbers = true)]
    pub max_turns: i64,
    /// Conversation deadline after the root, in ms (1000 to 900000)
    #[arg(long, default_value_t = 300_000, allow_negative_numbers = true)]
    pub timeout_ms: i64,
    /// Deadline of each turn, in ms (1000 to 300000, at most --timeout-ms)
    #[arg(long, default_value_t = 60_000, allow_negative_numbers = true)]
    pub turn_timeout_ms: i64,
    /// Reserve the peer's first turn in the same atomic write
    #[arg(long)]
    pub wake_peer: bool,
    #[command(flatten)]
    pub idempotency: super::IdempotencyArgs,
    #[command(flatten)]
    pub quiet: super::QuietArgs,
    #[command(flatten)]
    pub supervise: SuperviseArgs,
}

pub fn run(ctx: &Context, args: &AskArgs) -> Result<u8> {
    let request = AskRequest::new(
        &args.from,
        &args.to,
        &args.fleet,
        &args.payload.read()?,
        args.max_turns,
        args.timeout_ms,
        args.turn_timeout_ms,
        args.wake_peer,
    )?;
    let supervise = args.supervise.options()?;
    if supervise.is_some() && !args.wake_peer {
        return Err(crate::error::Error::new(
            crate::error::ErrorCode::InvalidArgument,
            "a command after -- runs the peer's first turn: it needs --wake-peer",
        )
        .hint("add --wake-peer, or wake the peer later with `discuss wake ... -- CMD`"));
    }
    let key = args.idempotency.key()?;
    let reserved_at = std::time::Instant::now();
    let (outcome, replayed) = perform(ctx, &request, key)?;
    let quiet = || ctx.out.print_text(&format!("{}\n", outcome.discussion.id));
    if replayed && args.quiet.quiet {
        quiet();
        return Ok(0);
    }
    if replayed {
        // A retry: the original answer, and no second run of the agent.
        return print_replayed(ctx, &to_json(&outcome), || to_human(ctx, &outcome));
    }
    if let (Some(options), Some(attempt)) = (supervise, &outcome.attempt) {
        let supervised =
            crate::supervisor::run(ctx, &outcome.discussion, attempt, &options, reserved_at)?;
        if args.quiet.quiet {
            quiet();
        } else if ctx.out.json {
            // Status and head as they are after the supervised turn.
            let (now, _) = super::show::load(ctx, &outcome.discussion.id)?;
            let mut value = to_json(&AskOutcome {
                discussion: now,
                attempt: Some(supervised.attempt.clone()),
            });
            value["attempt"] = supervised.to_json();
            ctx.out.print_json(&value);
        } else {
            ctx.out.print_text(&to_human(ctx, &outcome));
            ctx.out.print_text(&super::wake::supervised_human(
                &outcome.discussion.id,
                &supervised,
            ));
        }
        return Ok(supervised.exit_status());
    }
    if args.quiet.quiet {
        quiet();
    } else if ctx.out.json {
        ctx.out.print_json(&to_json(&outcome));
    } else {
        ctx.out.print_text(&to_human(ctx, &outcome));
    }
    Ok(0)
}

/// Writes the root (and the reservation); with an idempotency key already
/// used for this very request, writes nothing and answers the original
/// (`true` = replayed).
pub fn perform(
    ctx: &Context,
    request: &AskRequest,
    key: Option<&str>,
) -> Result<(AskOutcome, bool)> {
    super::write_once(
        ctx,
        &[],
        key,
        &request.digest,
        |earlier| {
            let discussion = idempotency::as_written(earlier)?;
            // The reservation written with the root, if it asked for one.
            let attempt = earlier
                .discussion
                .iter()
                .filter(|r| r.op_id.as_deref() == Some(&earlier.first.id))
                .find_map(|r| match &r.body {
                    crate::ledger::Body::Receipt(receipt) if receipt.receipt == RESERVED => {
                        receipt.attempt_id.as_deref()
                    }
                    _ => None,
                })
                .and_then(|id| discussion.attempt(id).cloned());
            Ok(AskOutcome {
                discussion,
                attempt,
            })
        },
        |view| {
            let stamp = ctx.stamp(view.last_at_ms());
            plan_ask(&view.global(stamp.at_ms), request, &stamp)
        },
    )
}

/// Prints the answer of a replayed write: `"replayed": true` in JSON, a
/// note in human output.
pub fn print_replayed(ctx: &Context, json: &Value, human: impl FnOnce() -> String) -> Result<u8> {
    if ctx.out.json {
        let mut json = json.clone();
        json["replayed"] = true.into();
        ctx.out.print_json(&json);
    } else {
        ctx.out.print_text(&format!(
            "{}(replayed: this key was used before; nothing was written)\n",
            human()
        ));
    }
    Ok(0)
}

pub fn to_json(outcome: &AskOutcome) -> Value {
    let d = &outcome.discussion;
    let root = d.root.as_ref().expect("a new discussion has its root");
    json!({
        "discussion_id": d.id,
        "root_message_id": root.message_id,
        "head_message_id": d.head().map(|h| h.message_id.clone()),
        "status": d.status.as_str(),
        "policy": policy_json(root),
        "attempt": outcome.attempt.as_ref().map_or(Value::Null, attempt_json),
    })
}

fn to_human(ctx: &Context, outcome: &AskOutcome) -> String {
    let d = &outcome.discussion;
    let root = d.root.as_ref().expect("a new discussion has its root");
    let mut text = format!(
        "{}  {}  {} → {}, {} turns, deadline {}\nroot {}\n",
        d.id,
        ctx.out.status(d.status),
        root.asker,
        root.peer,
        root.policy.max_turns,
        crate::clock::format_ms(root.deadline_ms),
        root.message_id
    );
    match &outcome.attempt {
        Some(a) => text.push_str(&format!(
            "woke {} for turn {}: attempt {}\n",
            a.agent_id, a.turn, a.attempt_id
        )),
        None => text.push_str(&format!(
            "next: discuss wake --agent {} --discussion {} --expected-head {}\n",
            root.peer, d.id, root.message_id
        )),
    }
    text
}
