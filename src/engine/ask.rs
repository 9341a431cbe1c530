//! `ask`: the root message, and with `--wake-peer` the first reservation.

use super::{AskRequest, Stamp, finish_plan};
use crate::discussion::{Attempt, Discussion};
use crate::error::{Error, ErrorCode, Result};
use crate::global::Global;
use crate::ids;
use crate::record::{Body, Record};
use crate::record::{Message, Receipt, ReceiptKind};

#[derive(Debug, Clone)]
pub struct AskOutcome {
    pub discussion: Discussion,
    pub attempt: Option<Attempt>,
    /// `wake_peer` under an approval gate: the request recorded instead
    /// of the reservation, as the refusal the ask then answers.
    pub approval_required: Option<Error>,
}

/// Checks in the contract's order: `kill_switch_engaged`, `unknown_fleet`,
/// `not_in_fleet`, then (with wake_peer) `wake_quota_exceeded`.
pub fn plan_ask(
    global: &Global,
    request: &AskRequest,
    stamp: &Stamp,
) -> Result<(Vec<Record>, AskOutcome)> {
    global.check_halts(crate::global::Covered {
        fleet: Some(&request.fleet),
        agents: [Some(&request.from), Some(&request.to)],
        discussion: None,
    })?;
    let Some(members) = global.members(&request.fleet) else {
        return Err(Error::new(
            ErrorCode::UnknownFleet,
            format!("no fleet {}", request.fleet),
        )
        .detail("fleet_id", request.fleet.as_str())
        .hint_each(
            format!(
                "register the agents first: `discuss fleet add {} {} {}`",
                request.fleet, request.from, request.to
            ),
            format!(
                "no tool makes fleets: an operator registers the agents (discuss fleet add {} {} {})",
                request.fleet, request.from, request.to
            ),
        ));
    };
    let missing: Vec<&str> = [request.from.as_str(), request.to.as_str()]
        .into_iter()
        .filter(|agent| !members.contains(*agent))
        .collect();
    if !missing.is_empty() {
        return Err(Error::new(
            ErrorCode::NotInFleet,
            format!(
                "{} not a member of fleet {}",
                missing.join(" and "),
                request.fleet
            ),
        )
        .detail("fleet_id", request.fleet.as_str())
        .detail("agent_ids", missing.clone())
        .hint_each(
            format!(
                "`discuss fleet add {} {}` registers them",
                request.fleet,
                missing.join(" ")
            ),
            format!(
                "no tool changes fleets: an operator registers them (discuss fleet add {} {})",
                request.fleet,
                missing.join(" ")
            ),
        ));
    }
    let root = stamp.record(
        ids::MESSAGE,
        Body::Message(Message {
            fleet_id: request.fleet.clone(),
            from_agent_id: request.from.clone(),
            to_agent_id: request.to.clone(),
            correlation_id: Some(request.discussion_id.clone()),
            payload: request.envelope.clone(),
        }),
    );
    let mut records = vec![root.clone()];
    let mut approval_required = None;
    let mut reserve = request.wake_peer;
    if request.wake_peer {
        let (_, rooted) = finish_plan(&request.discussion_id, &[], records.clone(), stamp)?;
        let head = rooted
            .head()
            .cloned()
            .ok_or_else(|| Error::new(ErrorCode::Internal, "a new discussion without its root"))?;
        match super::approval::check_gate(global, &rooted, &head, &request.to, 2, stamp)? {
            super::approval::GateCheck::Pass { .. } => {
                global.check_quota(&request.to, stamp.at_ms)?;
                global.check_spend_quota(&request.to, stamp.at_ms)?;
            }
            super::approval::GateCheck::Request { record, expires_ms } => {
                approval_required = Some(super::approval::required(
                    &request.discussion_id,
                    &record.id,
                    expires_ms,
                ));
                records.push(*record);
                reserve = false;
            }
        }
    }
    let attempt_id = reserve.then(|| ids::new_id(ids::ATTEMPT));
    if let Some(attempt_id) = &attempt_id {
        let conversation_deadline = stamp.at_ms + request.policy.timeout_ms;
        records.push(stamp.record(
            ids::RECEIPT,
            Body::Receipt(Box::new(Receipt {
                receipt: ReceiptKind::Reserved.name().into(),
                discussion_id: request.discussion_id.clone(),
                attempt_id: Some(attempt_id.clone()),
                agent_id: Some(request.to.clone()),
                turn: Some(2),
                head_message_id: Some(root.id.clone()),
                deadline_ms: Some(
                    (stamp.at_ms + request.policy.turn_timeout_ms).min(conversation_deadline),
                ),
                ..Receipt::default()
            })),
        ));
    }
    let (records, discussion) = finish_plan(&request.discussion_id, &[], records, stamp)?;
    let attempt = attempt_id.and_then(|id| discussion.attempt(&id).cloned());
    Ok((
        records,
        AskOutcome {
            discussion,
            attempt,
            approval_required,
        },
    ))
}
