//! Approval gates in the plans: whether a wake may reserve (a grant of
//! its head), must wait (a request pending, or a new one recorded), or is
//! refused (a denial); the grant or denial a person records; a gate set
//! or cleared.

use super::{Stamp, finish_plan};
use crate::clock::format_ms;
use crate::discussion::{ApprovalState, Discussion, Entry};
use crate::error::{Error, ErrorCode, Result};
use crate::global::{GateRule, Global, Wakes};
use crate::ids;
use crate::record::{Body, Gate, Receipt, ReceiptKind, Record, Scope};
use serde_json::json;

/// What a gate says of one wake.
#[derive(Debug)]
pub enum GateCheck {
    /// No gate covers it, or a grant of its head lets it through (named
    /// on the reservation).
    Pass { approval_id: Option<String> },
    /// A new request to record; the wake is then refused
    /// `approval_required`.
    Request {
        record: Box<Record>,
        expires_ms: i64,
    },
}

/// The gate check of a wake of `head` by `agent`, which would charge
/// `turn` (in the contract's order: after `turn_already_active`, before
/// `wake_quota_exceeded`).
pub fn check_gate(
    global: &Global,
    discussion: &Discussion,
    head: &Entry,
    agent: &str,
    turn: u32,
    stamp: &Stamp,
) -> Result<GateCheck> {
    let Some(root) = discussion.root.as_ref() else {
        return Ok(GateCheck::Pass { approval_id: None });
    };
    let wake = Wakes {
        agent,
        fleet: &root.fleet_id,
        discussion: &discussion.id,
    };
    let (tokens, cost) = (discussion.spend.tokens(), discussion.spend.cost_usd);
    let Some(rule) = global.gate_of(wake, turn, tokens, cost) else {
        return Ok(GateCheck::Pass { approval_id: None });
    };
    let now = stamp.at_ms;
    if let Some(approval) = discussion
        .approval()
        .filter(|a| a.head_message_id == head.message_id && a.agent_id == agent)
    {
        match approval.state(now) {
            ApprovalState::Granted if approval.grant_unused() => {
                return Ok(GateCheck::Pass {
                    approval_id: Some(approval.approval_id.clone()),
                });
            }
            ApprovalState::Denied => return Err(denied(discussion, approval, false)),
            ApprovalState::Pending => {
                return Err(required(
                    &discussion.id,
                    &approval.approval_id,
                    approval.expires_ms,
                ));
            }
            // Expired (nobody said no) or a grant used up: ask again.
            _ => {}
        }
    }
    let expires_ms = now
        .saturating_add(rule.approval_timeout_ms)
        .min(root.deadline_ms);
    let record = stamp.record(
        ids::RECEIPT,
        Body::Receipt(Box::new(Receipt {
            receipt: ReceiptKind::ApprovalRequested.name().into(),
            discussion_id: discussion.id.clone(),
            agent_id: Some(agent.to_owned()),
            head_message_id: Some(head.message_id.clone()),
            turn: Some(turn),
            rule: Some(Box::new(rule.to_json())),
            spend: Some(Box::new(json!({
                "tokens": tokens,
                "cost_usd": cost.to_json(),
            }))),
            expires_ms: Some(expires_ms),
            ..Receipt::default()
        })),
    );
    Ok(GateCheck::Request {
        record: Box::new(record),
        expires_ms,
    })
}

/// `approval_required`: what a person runs to decide it.
pub fn required(discussion_id: &str, approval_id: &str, expires_ms: i64) -> Error {
    Error::new(
        ErrorCode::ApprovalRequired,
        format!(
            "a gate covers this wake: {approval_id} waits for a person's decision until {}",
            format_ms(expires_ms)
        ),
    )
    .detail("approval_id", approval_id)
    .detail("discussion_id", discussion_id)
    .detail("expires_at", format_ms(expires_ms))
    .detail("approve", format!("discuss approve {approval_id}"))
    .detail(
        "deny",
        format!("discuss deny {approval_id} --reason TEXT"),
    )
    .detail("endpoint", format!("POST /v1/approvals/{approval_id}"))
    .hint_each(
        format!(
            "an operator decides it: `discuss approve {approval_id}` or `discuss deny {approval_id} --reason TEXT`; `wake --wait-approval` waits for the decision"
        ),
        format!(
            "an operator decides it (discuss approve {approval_id}); wake again on the same head once it is granted"
        ),
    )
}

/// `approval_denied`: a person said no to this head, or nobody said yes
/// in time (`expired`).
pub fn denied(
    discussion: &Discussion,
    approval: &crate::discussion::Approval,
    expired: bool,
) -> Error {
    let (reason, by) = match (&approval.decision, expired) {
        (Some(d), false) => (d.reason.clone().unwrap_or_default(), Some(d.by.clone())),
        _ => ("expired".to_owned(), None),
    };
    let message = match &by {
        Some(by) => format!(
            "{by} denied the wake of {} on {}: {reason}",
            approval.agent_id, approval.head_message_id
        ),
        None => format!(
            "nobody decided {} before {}: read as denied",
            approval.approval_id,
            format_ms(approval.expires_ms)
        ),
    };
    Error::new(ErrorCode::ApprovalDenied, message)
        .detail("approval_id", approval.approval_id.as_str())
        .detail("discussion_id", discussion.id.as_str())
        .detail("reason", reason)
        .hint_each(
            if by.is_some() {
                "the discussion stays as it is; an operator who wants it stopped halts it (`discuss kill-switch on --discussion ID`)".to_owned()
            } else {
                "the next wake of this head asks again".to_owned()
            },
            if by.is_some() {
                "a denied head is not woken; the discussion stays as it is".to_owned()
            } else {
                "the next wake of this head asks again".to_owned()
            },
        )
}

/// A grant or a denial of `approval_id`, which must be pending.
pub fn plan_decision(
    discussion_id: &str,
    existing: &[&Record],
    approval_id: &str,
    granted: bool,
    reason: Option<String>,
    stamp: &Stamp,
) -> Result<(Vec<Record>, Discussion)> {
    let discussion = crate::discussion::derive(discussion_id, existing, stamp.at_ms)
        .ok_or_else(|| unknown(approval_id))?;
    let approval = discussion
        .approvals
        .iter()
        .find(|a| a.approval_id == approval_id)
        .ok_or_else(|| unknown(approval_id))?;
    let head_moved = discussion.head().map(|h| &h.message_id) != Some(&approval.head_message_id);
    let state = approval.state(stamp.at_ms);
    if state != ApprovalState::Pending || head_moved || discussion.status.is_terminal() {
        let why = if state != ApprovalState::Pending {
            format!("it is {}", state.as_str())
        } else if discussion.status.is_terminal() {
            format!("{discussion_id} is {}", discussion.status.as_str())
        } else {
            "the head it was asked for has moved".to_owned()
        };
        return Err(Error::new(
            ErrorCode::ApprovalNotPending,
            format!("{approval_id} is not pending: {why}"),
        )
        .detail("approval_id", approval_id)
        .detail("discussion_id", discussion_id)
        .detail("state", state.as_str())
        .hint(format!("`discuss show {discussion_id}` shows its approval")));
    }
    let decision = stamp.record(
        ids::RECEIPT,
        Body::Receipt(Box::new(Receipt {
            receipt: if granted {
                ReceiptKind::ApprovalGranted
            } else {
                ReceiptKind::ApprovalDenied
            }
            .name()
            .into(),
            discussion_id: discussion_id.to_owned(),
            agent_id: Some(approval.agent_id.clone()),
            head_message_id: Some(approval.head_message_id.clone()),
            approval_id: Some(approval_id.to_owned()),
            reason,
            ..Receipt::default()
        })),
    );
    finish_plan(discussion_id, existing, vec![decision], stamp)
}

/// `unknown_approval`.
pub fn unknown(approval_id: &str) -> Error {
    Error::new(
        ErrorCode::UnknownApproval,
        format!("no approval request {approval_id} in the ledger"),
    )
    .detail("approval_id", approval_id)
    .hint(
        "`discuss list` marks the discussions awaiting approval; `discuss show` names the request",
    )
}

/// A gate set (with its rule) or cleared.
pub fn plan_gate(scope: Option<Scope>, rule: Option<&GateRule>, stamp: &Stamp) -> Vec<Record> {
    let gate = match rule {
        Some(rule) => Gate {
            scope,
            engaged: true,
            always: rule.always.then_some(true),
            from_turn: rule.from_turn,
            over_cost_usd: rule.over_cost_usd,
            over_tokens: rule.over_tokens,
            approval_timeout_ms: Some(rule.approval_timeout_ms),
        },
        None => Gate {
            scope,
            engaged: false,
            always: None,
            from_turn: None,
            over_cost_usd: None,
            over_tokens: None,
            approval_timeout_ms: None,
        },
    };
    vec![stamp.record(ids::RECORD, Body::Gate(gate))]
}
