//! `wake`: the atomic, budgeted reservation of one turn.

use super::{Stamp, WakeRequest, Writable, finish_plan, writable_discussion};
use crate::clock::format_ms;
use crate::discussion::{Attempt, Discussion};
use crate::error::{Error, ErrorCode, Result};
use crate::global::Global;
use crate::ids;
use crate::record::{Body, Record};
use crate::record::{Receipt, ReceiptKind};

/// What a wake wrote.
#[derive(Debug)]
pub enum Woken {
    Reserved(Box<(Discussion, Attempt)>),
    /// A gate covers it: the request a person decides was recorded, and
    /// the wake is refused with it (`approval_required`).
    ApprovalRequested(crate::error::Error),
}

/// Checks in the contract's order: `kill_switch_engaged`,
/// `unknown_discussion`, `discussion_invalid`, `discussion_terminal`,
/// `stale_head`, `not_recipient`, `turn_already_active`,
/// `approval_required`, `approval_denied`, `wake_quota_exceeded`.
pub fn plan_wake(
    global: &Global,
    existing: &[&Record],
    request: &WakeRequest,
    stamp: &Stamp,
) -> Result<(Vec<Record>, Woken)> {
    let Writable {
        discussion,
        root,
        head,
    } = writable_discussion(
        global,
        &request.discussion_id,
        existing,
        stamp.at_ms,
        request.participant_only.then_some(request.agent.as_str()),
    )?;
    let expected_head = super::resolve_among(
        "message",
        ids::MESSAGE,
        &request.expected_head,
        discussion.transcript.iter().map(|m| m.message_id.as_str()),
    )?;
    if head.message_id != expected_head {
        return Err(super::stale_head(
            &discussion,
            &head,
            "expected_head_message_id",
            &expected_head,
        )
        .hint_each(
            format!("read the head first: `discuss show {}`", discussion.id),
            format!(
                "read the head first (get_discussion {}), then wake on head.message_id",
                discussion.id
            ),
        ));
    }
    if head.to_agent_id != request.agent {
        return Err(Error::new(
            ErrorCode::NotRecipient,
            format!(
                "the head of {} is addressed to {}, not {}",
                discussion.id, head.to_agent_id, request.agent
            ),
        )
        .detail("to_agent_id", head.to_agent_id.as_str())
        .hint(format!("wake {} instead", head.to_agent_id)));
    }
    if let Some(live) = discussion.live_attempt() {
        return Err(Error::new(
            ErrorCode::TurnAlreadyActive,
            format!(
                "{} already holds turn {} of {} until {}",
                live.agent_id,
                live.turn,
                discussion.id,
                format_ms(live.deadline_ms)
            ),
        )
        .detail("attempt_id", live.attempt_id.as_str())
        .detail("agent_id", live.agent_id.as_str())
        .detail("deadline_at", format_ms(live.deadline_ms))
        .hint_each(
            format!(
                "wait for it: `discuss wait {} --until open,terminal`",
                discussion.id
            ),
            format!(
                "wait for its deadline_at, then read the discussion again (get_discussion {})",
                discussion.id
            ),
        ));
    }
    let turn = discussion.turns_used + 1;
    let approval_id =
        match super::approval::check_gate(global, &discussion, &head, &request.agent, turn, stamp)?
        {
            super::approval::GateCheck::Pass { approval_id } => approval_id,
            super::approval::GateCheck::Request { record, expires_ms } => {
                let refusal = super::approval::required(&discussion.id, &record.id, expires_ms);
                let (records, _) = finish_plan(&discussion.id, existing, vec![*record], stamp)?;
                return Ok((records, Woken::ApprovalRequested(refusal)));
            }
        };
    global.check_quota(&request.agent, stamp.at_ms)?;
    global.check_spend_quota(&request.agent, stamp.at_ms)?;
    let attempt_id = ids::new_id(ids::ATTEMPT);
    let deadline = (stamp.at_ms + root.policy.turn_timeout_ms).min(root.deadline_ms);
    let reservation = stamp.record(
        ids::RECEIPT,
        Body::Receipt(Box::new(Receipt {
            receipt: ReceiptKind::Reserved.name().into(),
            discussion_id: discussion.id.clone(),
            attempt_id: Some(attempt_id.clone()),
            agent_id: Some(request.agent.clone()),
            turn: Some(turn),
            head_message_id: Some(head.message_id.clone()),
            deadline_ms: Some(deadline),
            approval_id,
            into: request.into.clone(),
            ..Receipt::default()
        })),
    );
    let (records, state) = finish_plan(&discussion.id, existing, vec![reservation], stamp)?;
    let attempt = state
        .attempt(&attempt_id)
        .cloned()
        .expect("the reservation was accepted");
    Ok((records, Woken::Reserved(Box::new((state, attempt)))))
}
