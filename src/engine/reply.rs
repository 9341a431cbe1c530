//! `reply`: the woken agent's message and its `completed` receipt.

use super::{ReplyRequest, Stamp, Writable, finish_plan, writable_discussion};
use crate::discussion::{AttemptState, Discussion};
use crate::error::{Error, ErrorCode, Result};
use crate::global::Global;
use crate::ids;
use crate::record::{Body, Record};
use crate::record::{Message, Receipt, ReceiptKind};

/// Checks in the contract's order: `kill_switch_engaged`,
/// `unknown_discussion`, `discussion_invalid`, `discussion_terminal`,
/// `unknown_attempt`, `not_attempt_agent`, `attempt_not_live`, `stale_head`;
/// then the exact envelope size.
pub fn plan_reply(
    global: &Global,
    existing: &[&Record],
    request: &ReplyRequest,
    stamp: &Stamp,
) -> Result<(Vec<Record>, (Discussion, String))> {
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
    // Ids may be given as unique prefixes among this discussion's: what
    // is written carries them whole.
    let mut request = request.clone();
    request.attempt_id = super::resolve_among(
        "attempt",
        ids::ATTEMPT,
        &request.attempt_id,
        discussion.attempts.iter().map(|a| a.attempt_id.as_str()),
    )?;
    request.reply_to = super::resolve_among(
        "message",
        ids::MESSAGE,
        &request.reply_to,
        discussion.transcript.iter().map(|m| m.message_id.as_str()),
    )?;
    let request = &request;
    let Some(attempt) = discussion.attempt(&request.attempt_id) else {
        return Err(Error::new(
            ErrorCode::UnknownAttempt,
            format!("{} has no attempt {}", discussion.id, request.attempt_id),
        )
        .detail("attempt_id", request.attempt_id.as_str())
        .hint_each(
            "reply with the attempt id that `discuss wake` printed",
            "reply with the attempt_id that wake_agent answered (inbox rows carry live_attempt_id)",
        ));
    };
    if attempt.agent_id != request.agent {
        return Err(Error::new(
            ErrorCode::NotAttemptAgent,
            format!(
                "{} was reserved for {}, not {}",
                attempt.attempt_id, attempt.agent_id, request.agent
            ),
        )
        .detail("agent_id", attempt.agent_id.as_str()));
    }
    if !matches!(
        attempt.state,
        AttemptState::Reserved | AttemptState::Started
    ) {
        return Err(Error::new(
            ErrorCode::AttemptNotLive,
            format!(
                "{} is {}; only a live attempt can reply",
                attempt.attempt_id,
                attempt.state.as_str()
            ),
        )
        .detail("attempt_id", attempt.attempt_id.as_str())
        .detail("state", attempt.state.as_str())
        .hint_each(
            "no retries: a new turn needs a new `discuss wake`",
            "no retries: a new turn needs a new wake_agent",
        ));
    }
    if request.reply_to != head.message_id {
        return Err(super::stale_head(
            &discussion,
            &head,
            "reply_to_message_id",
            &request.reply_to,
        )
        .hint_each(
            format!("reply to the head: --reply-to {}", head.message_id),
            format!("reply to the head: reply_to_message_id {}", head.message_id),
        ));
    }
    let envelope = request.envelope(attempt.turn)?;
    let message = stamp.record(
        ids::MESSAGE,
        Body::Message(Message {
            fleet_id: root.fleet_id.clone(),
            from_agent_id: request.agent.clone(),
            to_agent_id: root.other(&request.agent).to_owned(),
            correlation_id: Some(discussion.id.clone()),
            payload: envelope,
        }),
    );
    let completed = stamp.record(
        ids::RECEIPT,
        Body::Receipt(Box::new(Receipt {
            receipt: ReceiptKind::Completed.name().into(),
            discussion_id: discussion.id.clone(),
            attempt_id: Some(attempt.attempt_id.clone()),
            agent_id: Some(request.agent.clone()),
            message_id: Some(message.id.clone()),
            usage: request.usage.map(|u| Box::new(u.to_json())),
            usage_unreadable: request.usage_unreadable.then_some(true),
            ..Receipt::default()
        })),
    );
    let message_id = message.id.clone();
    let (records, state) = finish_plan(&discussion.id, existing, vec![message, completed], stamp)?;
    Ok((records, (state, message_id)))
}
