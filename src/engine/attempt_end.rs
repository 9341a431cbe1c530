//! Receipts a supervisor records about an attempt it runs: `started`, and
//! a `failed` or `deadman` end.

use super::{Stamp, finish_plan};
use crate::discussion::{AttemptState, Discussion, derive};
use crate::error::Result;
use crate::global::Global;
use crate::ids;
use crate::record::{Body, Receipt, ReceiptKind, Record};

/// Why a supervisor ended an attempt without a reply: its receipt's
/// `reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// The command could not be started.
    SpawnFailed,
    /// The command exited without replying.
    ExitedWithoutReply,
    /// The turn's deadline came: a `deadman` end.
    Deadline,
    /// The kill-switch was engaged during the turn.
    KillSwitch,
    /// The supervisor was asked to stop (SIGINT, SIGTERM, SIGHUP).
    Interrupted,
    /// `--reply-from-stdout`: the command printed nothing.
    EmptyOutput,
    /// `--reply-from-stdout`: the output is over what a body may hold.
    OutputTooLarge,
    /// `--reply-from-stdout`: the reply made of the output was refused.
    ReplyRefused,
    /// `wake --into`: the pointer could not be typed (the pane never
    /// quieted, or vanished).
    DeliveryFailed,
}

impl EndReason {
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::SpawnFailed => "spawn_failed",
            EndReason::ExitedWithoutReply => "exited_without_reply",
            EndReason::Deadline => "deadline",
            EndReason::KillSwitch => "kill_switch",
            EndReason::Interrupted => "interrupted",
            EndReason::EmptyOutput => "empty_output",
            EndReason::OutputTooLarge => "output_too_large",
            EndReason::ReplyRefused => "reply_refused",
            EndReason::DeliveryFailed => "delivery_failed",
        }
    }
}

/// How a supervised attempt ended without a reply (`deadman` when its
/// reason is the deadline).
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptEnd {
    pub reason: EndReason,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub detail: Option<String>,
    /// What the turn reported it cost (its usage file), if anything.
    pub usage: Option<crate::spend::Usage>,
    /// Its usage file was there but could not be read.
    pub usage_unreadable: bool,
}

/// The `started` receipt, while the attempt is still reserved.
pub fn plan_started(
    global: &Global,
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
    // A halt engaged since the reservation covers the turn before the
    // agent runs: `kill_switch_engaged`, and the supervisor ends it.
    global.check_halts(discussion.covered())?;
    let started = stamp.record(
        ids::RECEIPT,
        Body::Receipt(Box::new(Receipt {
            receipt: ReceiptKind::Started.name().into(),
            discussion_id: discussion_id.into(),
            attempt_id: Some(attempt_id.into()),
            agent_id: Some(attempt.agent_id.clone()),
            pid: Some(pid),
            ..Receipt::default()
        })),
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
    let deadman = end.reason == EndReason::Deadline || attempt.state == AttemptState::Deadman;
    let receipt = stamp.record(
        ids::RECEIPT,
        Body::Receipt(Box::new(Receipt {
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
            // The deadline is authoritative: past it, the end is deadman
            // whatever the supervisor saw.
            reason: Some(
                if deadman {
                    EndReason::Deadline
                } else {
                    end.reason
                }
                .as_str()
                .into(),
            ),
            exit_code: end.exit_code,
            signal: end.signal,
            detail: end.detail.clone(),
            usage: end.usage.map(|u| Box::new(u.to_json())),
            usage_unreadable: end.usage_unreadable.then_some(true),
            ..Receipt::default()
        })),
    );
    let (records, state) = finish_plan(discussion_id, existing, vec![receipt], stamp)?;
    Ok((records, Some(state)))
}
