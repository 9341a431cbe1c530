//! `discuss escalations [--pending]` and `escalations deliver [--follow]
//! -- CMD`: every escalation with its delivery, and handing each pending
//! one to a command that tells a person (chat, a ticket, a page).

use super::Context;
use crate::discussion::{ApprovalState, Delivery};
use crate::engine::{DeliveryStep, LEASE_MS};
use crate::error::{EXIT_TURN_FAILED, Result};
use crate::operations::approvals::requests;
use crate::operations::escalations::{escalated, record};
use crate::operations::watch::Changes;
use crate::output::{
    Answer, DeliveryPassView, DeliveryView, EscalationsView, approval_handout, escalation_env,
    escalation_object,
};
use crate::supervisor::handoff::{HandoffEnd, hand_off};
use clap::{Args, Subcommand};
use serde_json::Value;
use std::collections::HashSet;
use std::time::Duration;

// Escalations (discussions that ran out of a budget) and whether a
// person has heard of them.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  discuss escalations --pending\n  \
    discuss escalations deliver -- \\\n      ./examples/deliver-webhook.sh https://hooks.example/discuss\n  \
    discuss escalations deliver --follow -- \\\n      ./examples/deliver-file.sh /var/log/discuss-escalations.jsonl")]
pub(crate) struct EscalationsArgs {
    /// Only those not delivered yet
    #[arg(long)]
    pub pending: bool,
    #[command(subcommand)]
    pub command: Option<EscalationsCommand>,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum EscalationsCommand {
    /// Hand each pending escalation and approval request to CMD (its JSON
    /// on stdin, its fields as DISCUSS_* variables): claimed first, then
    /// recorded delivered (exit 0) or failed (retried after a backoff)
    Deliver {
        /// Keep watching for new escalations until SIGINT or SIGTERM
        #[arg(long)]
        follow: bool,
        /// The delivery command (argv, never a shell)
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<String>,
    },
}

/// A delivery command is cut off well before its claim's lease lapses,
/// so that no other deliverer can start on the same escalation while it
/// runs.
const DELIVERY_TIMEOUT: Duration = Duration::from_millis((LEASE_MS - 60_000) as u64);
/// How often `--follow` looks for changes.
const FOLLOW_POLL: Duration = Duration::from_millis(100);

pub(crate) fn run(ctx: &Context, args: &EscalationsArgs) -> Result<Answer> {
    match &args.command {
        None => {
            let (mut discussions, now_ms) = escalated(ctx, &HashSet::new())?;
            let due = crate::operations::escalations::due(ctx)?;
            if args.pending {
                discussions.retain(|d| {
                    d.escalation
                        .as_ref()
                        .is_some_and(|e| e.delivery.delivered.is_none())
                });
            }
            Ok(Answer::new(EscalationsView {
                discussions,
                now_ms,
                due,
                pending_only: args.pending,
            }))
        }
        Some(EscalationsCommand::Deliver { follow, command }) => deliver(ctx, *follow, command),
    }
}

/// One thing a person must hear of: an escalation, or an approval
/// request waiting for a decision.
struct Handout {
    kind: &'static str,
    discussion_id: String,
    receipt_id: String,
    reason: String,
    delivery: Delivery,
    object: Value,
}

/// Every escalation (but of the discussions in `delivered_ids`) and every
/// pending approval request, newest escalation first, then the oldest
/// request; and the instant they were derived at.
fn handouts(ctx: &Context, delivered_ids: &HashSet<String>) -> Result<(Vec<Handout>, i64)> {
    let (discussions, now_ms) = escalated(ctx, delivered_ids)?;
    let mut found: Vec<Handout> = discussions
        .iter()
        .filter_map(|d| {
            let e = d.escalation.as_ref()?;
            Some(Handout {
                kind: "escalation",
                discussion_id: d.id.clone(),
                receipt_id: e.receipt_id.clone(),
                reason: e.reason.clone(),
                delivery: e.delivery.clone(),
                object: escalation_object(d),
            })
        })
        .collect();
    for decided in requests(ctx, Some(ApprovalState::Pending))? {
        found.push(Handout {
            kind: "approval",
            discussion_id: decided.discussion.id.clone(),
            receipt_id: decided.approval.approval_id.clone(),
            reason: "approval".into(),
            delivery: decided.approval.delivery.clone(),
            object: approval_handout(&decided),
        });
    }
    Ok((found, now_ms))
}

/// The deliverer's loop, in the contract's order: record the due
/// escalations, then for each pending escalation or approval request
/// claim, hand off and record how it went, then (with `--follow`) wait
/// for the ledger to change.
fn deliver(ctx: &Context, follow: bool, command: &[String]) -> Result<Answer> {
    crate::supervisor::catch_stop_signals()?;
    let (mut delivered_count, mut failed_count) = (0, 0);
    let mut changes = Changes::from_now(ctx);
    let mut delivered_ids = HashSet::new();
    loop {
        // Every unresolved end first: a deadman or an expiry has no write
        // of its own to record its escalation.
        crate::operations::escalations::record_due(ctx)?;
        let (found, now_ms) = handouts(ctx, &delivered_ids)?;
        for handout in &found {
            if crate::supervisor::stop_requested() {
                break;
            }
            if handout.delivery.delivered.is_some() {
                delivered_ids.insert(handout.discussion_id.clone());
                continue;
            }
            let Some(delivered) = deliver_one(ctx, handout, command, now_ms, follow)? else {
                continue;
            };
            if delivered {
                delivered_count += 1;
                if handout.kind == "escalation" {
                    delivered_ids.insert(handout.discussion_id.clone());
                }
            } else {
                failed_count += 1;
            }
        }
        if !follow || crate::supervisor::stop_requested() {
            break;
        }
        // Look again when the ledger changes, or every second for a
        // backoff or a lapsed lease to run out.
        let mut waited = Duration::ZERO;
        while !crate::supervisor::stop_requested()
            && changes.fresh(ctx).is_none()
            && waited < Duration::from_secs(1)
        {
            std::thread::sleep(FOLLOW_POLL);
            waited += FOLLOW_POLL;
        }
        changes.seen(ctx.ledger.version());
        if crate::supervisor::stop_requested() {
            break;
        }
    }
    if follow {
        return Ok(Answer::streamed(0));
    }
    // What is still pending after the pass, and when the earliest of it
    // may be tried again: a cron job tells "nothing to do" from "waiting
    // for a retry" from "failed now".
    let (found, now_ms) = handouts(ctx, &delivered_ids)?;
    let waiting: Vec<i64> = found
        .iter()
        .filter(|h| h.delivery.delivered.is_none())
        .map(|h| h.delivery.next_attempt_ms(now_ms))
        .collect();
    let status = if failed_count == 0 {
        0
    } else {
        EXIT_TURN_FAILED
    };
    Ok(Answer::new(DeliveryPassView {
        delivered: delivered_count,
        failed: failed_count,
        pending: waiting.len(),
        next_attempt_at: waiting.iter().min().map(|&ms| crate::output::At(ms)),
        now_ms,
        status,
    }))
}

/// Claims `handout`, hands it to `command` and records how that went;
/// whether it was delivered, or `None` when it was not to be claimed
/// (held by another deliverer, waiting out a backoff, decided meanwhile).
fn deliver_one(
    ctx: &Context,
    handout: &Handout,
    command: &[String],
    now_ms: i64,
    follow: bool,
) -> Result<Option<bool>> {
    let (discussion_id, receipt_id) = (&handout.discussion_id, &handout.receipt_id);
    if !handout.delivery.claimable(now_ms)
        || !record(ctx, discussion_id, receipt_id, &DeliveryStep::Claim)?
    {
        return Ok(None);
    }
    let span = crate::traces::start(
        "deliver_escalation",
        opentelemetry::trace::SpanKind::Internal,
        crate::traces::Parent::Inherited,
    );
    if span.is_on() {
        span.set("gen_ai.conversation.id", discussion_id.clone());
        span.set("discuss.discussion_id", discussion_id.clone());
        span.set("discuss.escalation.receipt_id", receipt_id.clone());
        span.set("discuss.escalation.reason", handout.reason.clone());
        span.set("discuss.delivery.kind", handout.kind);
    }
    let handoff = hand_off(
        command,
        &format!("{}\n", handout.object),
        &escalation_env(&handout.object),
        DELIVERY_TIMEOUT,
    );
    let delivered = handoff.succeeded();
    let reason = match &handoff.end {
        _ if delivered => None,
        HandoffEnd::Exited => Some("exit_status"),
        HandoffEnd::TimedOut => Some("timeout"),
        HandoffEnd::SpawnFailed(_) => Some("spawn_failed"),
    };
    let step = match reason {
        None => DeliveryStep::Delivered,
        Some(reason) => DeliveryStep::Failed {
            reason: reason.to_owned(),
            exit_code: handoff.exit_code,
            signal: handoff.signal,
            detail: Some(match &handoff.end {
                HandoffEnd::SpawnFailed(why) => why.clone(),
                _ => handoff.stderr_tail.trim_end().to_owned(),
            })
            .filter(|d| !d.is_empty()),
        },
    };
    record(ctx, discussion_id, receipt_id, &step)?;
    span.set(
        "discuss.delivery.outcome",
        if delivered { "delivered" } else { "failed" },
    );
    if let Some(reason) = reason {
        span.fail(reason);
    }
    drop(span);
    // A one-shot pass with --json prints one object at its end; otherwise
    // each delivery is said as it is made.
    if follow || !ctx.out.json {
        ctx.out.item(&DeliveryView {
            kind: handout.kind,
            discussion_id: discussion_id.clone(),
            receipt_id: receipt_id.clone(),
            delivered,
            exit_code: handoff.exit_code,
            reason: reason.map(str::to_owned),
            at: crate::output::At(ctx.now(None)),
        })?;
    }
    Ok(Some(delivered))
}
