//! Receipts a supervisor records about an attempt it runs: `started`, and
//! a `failed` or `deadman` end.

use super::{Stamp, finish_plan};
use crate::discussion::{AttemptState, Discussion, derive};
use crate::error::Result;
use crate::ids;
use crate::record::{Body, Record};
use crate::record::{Receipt, ReceiptKind};

/// How a supervised attempt ended without a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptEnd {
    pub deadman: bool,
    pub reason: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub detail: Option<String>,
}

/// The `started` receipt, while the attempt is still reserved.
pub fn plan_started(
    discussion_id: &str,
    attempt_id: &str,
    pid: u32,
    existing: &[&Record],
    stamp: &Stamp,
) -> Result<(Vec<Record>, ())> {
    let Some(discussion) = derive(discussion_id, existing, stamp.at_ms) else {
        return Ok((Vec::new(), ()));
    };
    let Some(attempt) = discussion.attempt(attempt_id) else {
        return Ok((Vec::new(), ()));
    };
    if attempt.state != AttemptState::Reserved {
        return Ok((Vec::new(), ()));
    }
    let started = stamp.record(
        ids::RECEIPT,
        Body::Receipt(Receipt {
            receipt: ReceiptKind::Started.name().into(),
            discussion_id: discussion_id.into(),
            attempt_id: Some(attempt_id.into()),
            agent_id: Some(attempt.agent_id.clone()),
            pid: Some(pid),
            ..Receipt::default()
        }),
    );
    let (records, _) = finish_plan(discussion_id, existing, vec![started], stamp)?;
    Ok((records, ()))
}

/// The end receipt of an attempt that did not complete, unless one is
/// already recorded (or it completed after all). An attempt whose deadline
/// has passed is recorded `deadman`, whatever the supervisor saw: the
/// deadline is authoritative.
pub fn plan_attempt_end(
    discussion_id: &str,
    attempt_id: &str,
    end: &AttemptEnd,
    existing: &[&Record],
    stamp: &Stamp,
) -> Result<(Vec<Record>, Option<Discussion>)> {
    let Some(discussion) = derive(discussion_id, existing, stamp.at_ms) else {
        return Ok((Vec::new(), None));
    };
    let Some(attempt) = discussion.attempt(attempt_id) else {
        return Ok((Vec::new(), Some(discussion)));
    };
    if attempt.terminal_receipt
        || attempt.state == AttemptState::Completed
        || attempt.state == AttemptState::Failed
    {
        return Ok((Vec::new(), Some(discussion)));
    }
    let deadman = end.deadman || attempt.state == AttemptState::Deadman;
    let receipt = stamp.record(
        ids::RECEIPT,
        Body::Receipt(Receipt {
            receipt: if deadman {
                ReceiptKind::Deadman
            } else {
                ReceiptKind::Failed
            }
            .name()
            .into(),
            discussion_id: discussion_id.into(),
            attempt_id: Some(attempt_id.into()),
            agent_id: Some(attempt.agent_id.clone()),
            reason: Some(if deadman && !end.deadman {
                "deadline".into()
            } else {
                end.reason.clone()
            }),
            exit_code: end.exit_code,
            signal: end.signal,
            detail: end.detail.clone(),
            ..Receipt::default()
        }),
    );
    let (records, state) = finish_plan(discussion_id, existing, vec![receipt], stamp)?;
    Ok((records, Some(state)))
}
