//! Operations on the ledger, as pure plans: the current records + a
//! validated request → the records to append, or the contract error.
//!
//! A plan runs under the ledger's exclusive lock (see `operations`). Every
//! plan is checked by deriving the discussion with its new records: a plan
//! that would make a discussion `invalid` is refused as an internal error,
//! and a plan that makes it `exhausted` gets its one escalation receipt.

mod admin;
pub mod approval;
mod ask;
mod attempt_end;
mod delivery;
pub mod idempotency;
mod live;
mod reply;
mod request;
mod wake;

pub use admin::{
    Quotas, plan_fleet, plan_kill_switch, plan_quota, plan_token_issue, plan_token_revoke,
};
pub use ask::{AskOutcome, plan_ask};
pub use attempt_end::{AttemptEnd, EndReason, plan_attempt_end, plan_started};
pub use delivery::{DeliveryStep, LEASE_MS, due_escalation, plan_delivery, plan_due_escalation};
pub use live::{plan_pickup, plan_pointer_delivered};
pub use reply::plan_reply;
pub use request::{AskRequest, ReplyRequest, WakeRequest};
pub use wake::{Woken, plan_wake};

use crate::discussion::{Discussion, Entry, Root, Status, derive};
use crate::error::{Error, ErrorCode, Result};
use crate::global::Global;
use crate::ids;
use crate::record::{Body, Record};
use crate::record::{Receipt, ReceiptKind};

/// Time and actor of the records one operation writes.
#[derive(Debug, Clone)]
pub struct Stamp {
    pub at_ms: i64,
    pub by: String,
    /// The token a `serve` caller was verified by (`Record::token_id`).
    pub token_id: Option<String>,
}

impl Stamp {
    pub fn record(&self, prefix: &str, body: Body) -> Record {
        Record {
            id: ids::new_id(prefix),
            at_ms: self.at_ms,
            by: self.by.clone(),
            body,
            line: 0,
            idempotency: None,
            op_id: None,
            token_id: self.token_id.clone(),
        }
    }
}

/// Derives a discussion with `new` records appended, adds the escalation
/// receipt when they make it `exhausted`, and refuses a plan that would
/// make it `invalid`. Returns all records to write and the new state.
pub fn finish_plan(
    discussion_id: &str,
    existing: &[&Record],
    mut new: Vec<Record>,
    stamp: &Stamp,
) -> Result<(Vec<Record>, Discussion)> {
    let derive_with = |new: &[Record]| {
        let all: Vec<&Record> = existing.iter().copied().chain(new.iter()).collect();
        derive(discussion_id, &all, stamp.at_ms).expect("the plan adds records")
    };
    let mut state = derive_with(&new);
    if state.status == Status::Exhausted && state.escalation.is_none() {
        new.push(stamp.record(
            ids::RECEIPT,
            Body::Receipt(Box::new(Receipt {
                receipt: ReceiptKind::Escalated.name().into(),
                discussion_id: discussion_id.into(),
                turns_used: Some(state.turns_used),
                reason: state.budget_reached().map(|b| b.as_str().to_owned()),
                ..Receipt::default()
            })),
        ));
        state = derive_with(&new);
    }
    // Refused when the new records make it invalid, or add to what makes
    // it so; an invalid discussion's escalation and its delivery receipts
    // add no finding and go through.
    let findings_before =
        || derive(discussion_id, existing, stamp.at_ms).map_or(0, |d| d.findings.len());
    if state.status == Status::Invalid && state.findings.len() > findings_before() {
        let detail = state
            .findings
            .last()
            .map(|f| f.detail.clone())
            .unwrap_or_default();
        return Err(Error::new(
            ErrorCode::Internal,
            format!("refusing a write that would make {discussion_id} invalid: {detail}"),
        ));
    }
    Ok((new, state))
}

/// No record names `discussion_id`.
pub fn unknown_discussion(discussion_id: &str) -> Error {
    Error::new(
        ErrorCode::UnknownDiscussion,
        format!("no discussion {discussion_id} in the ledger"),
    )
    .detail("discussion_id", discussion_id)
}

/// The id that `given` names among a discussion's `known` ids of one
/// kind (`prefix`: `msg_`, `att_`): itself when it is one of them, else the
/// one it is a prefix of when it has at least four characters after
/// `prefix` (`ambiguous_id` when several start with it); else `given`
/// unchanged, for the caller's own "no such" error.
pub(crate) fn resolve_among<'a>(
    what: &str,
    prefix: &str,
    given: &str,
    known: impl Iterator<Item = &'a str> + Clone,
) -> Result<String> {
    const SHORTEST_AFTER_PREFIX: usize = 4;
    if known.clone().any(|id| id == given) || given.len() < prefix.len() + SHORTEST_AFTER_PREFIX {
        return Ok(given.to_owned());
    }
    let mut matches: Vec<&str> = known.filter(|id| id.starts_with(given)).collect();
    matches.dedup();
    match matches.as_slice() {
        [] => Ok(given.to_owned()),
        [one] => Ok((*one).to_owned()),
        many => Err(Error::new(
            ErrorCode::AmbiguousId,
            format!(
                "{given} is the start of {} {what} ids of this discussion",
                many.len()
            ),
        )
        .detail("prefix", given)
        .detail(
            "candidates",
            many.iter().take(10).copied().collect::<Vec<_>>(),
        )
        .hint("give more of the id")),
    }
}

/// `stale_head` for an id that is not the head: the seed's code either
/// way, but a message says whether `given` is an older message of the
/// discussion (the head moved: a race) or names none of its messages (a
/// typo), and `details.known` tells a program which.
pub(crate) fn stale_head(discussion: &Discussion, head: &Entry, field: &str, given: &str) -> Error {
    let known = discussion.transcript.iter().any(|m| m.message_id == given);
    let message = if known {
        format!(
            "the head of {} moved: it is {} now, not {given} (an older message)",
            discussion.id, head.message_id
        )
    } else {
        format!(
            "{} has no message {given}; its head is {}",
            discussion.id, head.message_id
        )
    };
    Error::new(ErrorCode::StaleHead, message)
        .detail("head_message_id", head.message_id.as_str())
        .detail(field, given)
        .detail("known", known)
}

/// A discussion that takes writes, with its root and its head.
pub struct Writable {
    pub discussion: Discussion,
    pub root: Root,
    pub head: Entry,
}

/// The checks `wake` and `reply` share, in the contract's order:
/// `kill_switch_engaged`, `unknown_discussion`, `discussion_invalid`,
/// `discussion_terminal`.
pub fn writable_discussion(
    global: &Global,
    discussion_id: &str,
    records: &[&Record],
    now_ms: i64,
    participant: Option<&str>,
) -> Result<Writable> {
    global.check_kill_switch()?;
    let Some(discussion) = derive(discussion_id, records, now_ms) else {
        return Err(unknown_discussion(discussion_id));
    };
    // An agent token's write reads a discussion it takes no part in as
    // one that does not exist: no status, head or participant leaks.
    if let Some(agent) = participant
        && !discussion
            .root
            .as_ref()
            .is_some_and(|root| root.asker == agent || root.peer == agent)
    {
        return Err(unknown_discussion(discussion_id));
    }
    // The scoped switches that cover it, first in the contract's order.
    global.check_halts(discussion.covered())?;
    if discussion.status == Status::Invalid {
        return Err(Error::new(
            ErrorCode::DiscussionInvalid,
            format!("{discussion_id} is invalid and takes no more writes"),
        )
        .detail("discussion_id", discussion_id)
        .detail("findings", discussion.findings.len())
        .hint(format!(
            "see its integrity findings with `discuss show {discussion_id}`"
        )));
    }
    if discussion.status.is_terminal() {
        return Err(ended(&discussion));
    }
    // The derivation gives every discussion that is not invalid a root,
    // and its root is its first head.
    let (Some(root), Some(head)) = (discussion.root.clone(), discussion.head().cloned()) else {
        return Err(Error::new(
            ErrorCode::Internal,
            format!(
                "{discussion_id} is {} but has no root or head",
                discussion.status.as_str()
            ),
        ));
    };
    Ok(Writable {
        discussion,
        root,
        head,
    })
}

/// `discussion_terminal` for a write on an ended discussion: why it ended,
/// in the terms of the option that set the limit it met.
fn ended(discussion: &Discussion) -> Error {
    let at = discussion
        .terminal
        .map(|(_, at_ms)| format!(" at {}", crate::clock::format_ms(at_ms)))
        .unwrap_or_default();
    // Why it ended, in the terms of the option that set the limit.
    let (why, option) = match discussion.status {
        Status::Expired => (
            format!("its conversation deadline passed{at}"),
            Some((
                "give the next one a longer conversation deadline: `discuss ask --timeout-ms N` (5 minutes unless given, 15 at most)",
                "give the next one a longer conversation deadline: timeout_ms on ask_peer (5 minutes unless given, 15 at most)",
            )),
        ),
        Status::Deadman => (
            format!("a turn passed its deadline unanswered{at}"),
            Some((
                "give the next one longer turns: `discuss ask --turn-timeout-ms N` (60 s unless given)",
                "give the next one longer turns: turn_timeout_ms on ask_peer (60 s unless given)",
            )),
        ),
        Status::Exhausted => (
            format!("its budget was spent{at}"),
            Some((
                "`discuss show` says which budget; give the next one more with `discuss ask --max-turns`, `--max-tokens` or `--max-cost-usd`",
                "get_discussion says which budget; give the next one more with max_turns, max_tokens or max_cost_usd on ask_peer",
            )),
        ),
        _ => (format!("it was closed{at}"), None),
    };
    let err = Error::new(
        ErrorCode::DiscussionTerminal,
        format!(
            "{} is {}: {why}; an ended discussion never reopens",
            discussion.id,
            discussion.status.as_str()
        ),
    )
    .detail("discussion_id", discussion.id.as_str())
    .detail("status", discussion.status.as_str());
    let err = match option {
        Some((cli, tool)) => err.hint_each(cli, tool),
        None => err,
    };
    err.hint_each(
        "start a new discussion with `discuss ask`",
        "start a new discussion with ask_peer",
    )
}

#[cfg(test)]
mod tests;
