//! The delivery receipts of an escalation (`escalations deliver`): a claim
//! under a lease, then `delivered` or `delivery_failed`. They never change
//! a discussion's status.

use super::{Stamp, finish_plan};
use crate::discussion::{Discussion, derive};
use crate::error::Result;
use crate::ids;
use crate::record::{Body, Receipt, ReceiptKind, Record};

/// How long a claim holds an escalation for its deliverer.
pub const LEASE_MS: i64 = 5 * 60 * 1000;

/// What a deliverer records of one escalation.
#[derive(Debug, Clone, PartialEq)]
pub enum DeliveryStep {
    /// Claims it, if it is unclaimed (or an earlier claim's lease lapsed)
    /// and not waiting out a backoff or delivered.
    Claim,
    Delivered,
    Failed {
        reason: String,
        exit_code: Option<i32>,
        signal: Option<i32>,
        detail: Option<String>,
    },
}

/// The receipt of `step` for the escalation or approval request
/// `escalation_receipt_id` of `discussion_id`, and the discussion after
/// it; no records when a claim is not to be had (or the escalation is not
/// there, or delivered, or the request was decided or expired).
pub fn plan_delivery(
    discussion_id: &str,
    escalation_receipt_id: &str,
    step: &DeliveryStep,
    existing: &[&Record],
    stamp: &Stamp,
) -> Result<(Vec<Record>, Option<Discussion>)> {
    let Some(discussion) = derive(discussion_id, existing, stamp.at_ms) else {
        return Ok((Vec::new(), None));
    };
    let Some((delivery, waiting)) = discussion.handout(escalation_receipt_id, stamp.at_ms) else {
        return Ok((Vec::new(), Some(discussion)));
    };
    let refused = match step {
        DeliveryStep::Claim => !waiting || !delivery.claimable(stamp.at_ms),
        _ => delivery.delivered.is_some(),
    };
    if refused {
        return Ok((Vec::new(), Some(discussion)));
    }
    let (kind, receipt) = match step {
        DeliveryStep::Claim => (
            ReceiptKind::EscalationClaimed,
            Receipt {
                deadline_ms: Some(stamp.at_ms.saturating_add(LEASE_MS)),
                ..Receipt::default()
            },
        ),
        DeliveryStep::Delivered => (ReceiptKind::EscalationDelivered, Receipt::default()),
        DeliveryStep::Failed {
            reason,
            exit_code,
            signal,
            detail,
        } => (
            ReceiptKind::EscalationDeliveryFailed,
            Receipt {
                reason: Some(reason.clone()),
                exit_code: *exit_code,
                signal: *signal,
                detail: detail.clone(),
                ..Receipt::default()
            },
        ),
    };
    let record = stamp.record(
        ids::RECEIPT,
        Body::Receipt(Box::new(Receipt {
            receipt: kind.name().into(),
            discussion_id: discussion_id.into(),
            escalation_receipt_id: Some(escalation_receipt_id.into()),
            ..receipt
        })),
    );
    let (records, state) = finish_plan(discussion_id, existing, vec![record], stamp)?;
    Ok((records, Some(state)))
}

/// The reason of the escalation a discussion is due for without any write
/// of its own: it reached `deadman` or `expired` by time, or turned
/// `invalid`, and nothing escalated it yet. `None` otherwise (exhaustion is
/// escalated by the write that exhausts it).
pub fn due_escalation(discussion: &Discussion) -> Option<&'static str> {
    if discussion.escalation.is_some() {
        return None;
    }
    match discussion.status {
        crate::discussion::Status::Deadman => Some("deadman"),
        crate::discussion::Status::Expired => Some("expired"),
        crate::discussion::Status::Invalid => Some("invalid"),
        _ => None,
    }
}

/// The escalation receipt of `discussion_id` when it is due (`due_escalation`),
/// derived under the writer lock, so that racing writers record it once.
pub fn plan_due_escalation(
    discussion_id: &str,
    existing: &[&Record],
    stamp: &Stamp,
) -> Result<(Vec<Record>, Option<Discussion>)> {
    let Some(discussion) = derive(discussion_id, existing, stamp.at_ms) else {
        return Ok((Vec::new(), None));
    };
    let Some(reason) = due_escalation(&discussion) else {
        return Ok((Vec::new(), Some(discussion)));
    };
    let receipt = stamp.record(
        ids::RECEIPT,
        Body::Receipt(Box::new(Receipt {
            receipt: ReceiptKind::Escalated.name().into(),
            discussion_id: discussion_id.into(),
            turns_used: Some(discussion.turns_used),
            reason: Some(reason.into()),
            ..Receipt::default()
        })),
    );
    let all: Vec<&Record> = existing.iter().copied().chain([&receipt]).collect();
    let after = derive(discussion_id, &all, stamp.at_ms);
    // Recorded only when derivation accepts it as this discussion's one
    // escalation (an invalid discussion's fold may not reach it).
    if after
        .as_ref()
        .and_then(|d| d.escalation.as_ref())
        .map(|e| &e.receipt_id)
        != Some(&receipt.id)
    {
        return Ok((Vec::new(), Some(discussion)));
    }
    Ok((vec![receipt], after))
}
