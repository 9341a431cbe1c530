//! One row of `list`: what it shows of a discussion.

use super::{Discussion, Status};
use crate::spend::Usd;
use serde::{Deserialize, Serialize};

mod flat;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use flat::flat_as_serde as row_scan_as_serde;

/// One row of `list`: what it shows of a discussion, kept small so a
/// ledger of any size lists in little memory. Its serde form is what the
/// ledger's summary keeps (times as milliseconds: any `i64` reads back);
/// the contract's row object is `output::rows::RowJson`. An unknown or missing field
/// makes a summary untrusted, never a wrong row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    pub id: String,
    pub fleet_id: Option<String>,
    /// The asker and the peer; empty without a usable root.
    pub participants: Vec<String>,
    pub status: Status,
    pub turns_used: u32,
    pub max_turns: u32,
    pub head_message_id: Option<String>,
    pub head_to_agent_id: Option<String>,
    pub updated_at_ms: i64,
    pub escalated: bool,
    /// The attempt that is live (reserved or started, before its
    /// deadline), if any: what the woken agent answers with `reply`.
    /// (Absent from summaries written before it existed: a settled row
    /// never has one.)
    #[serde(default)]
    pub live_attempt_id: Option<String>,
    #[serde(default)]
    pub live_attempt_deadline_ms: Option<i64>,
    /// When the approval request that waits for a person on its head
    /// expires, if one does (undecided when the row was made; a reader
    /// compares it with its own time). Absent from older summaries, whose
    /// versions never wrote one.
    #[serde(default)]
    pub approval_expires_ms: Option<i64>,
    /// How far its live turn reached a live session: `undelivered` (made
    /// `--into` a pane, not typed yet), `delivered` (typed, not picked
    /// up), `picked_up`; absent for a turn no session was told of.
    #[serde(default)]
    pub live_attempt_delivery: Option<String>,
    /// Spend: input + output tokens, and dollars. Required: a summary
    /// written before spend existed is folded anew, never read as 0.
    pub tokens: u64,
    pub cost_usd: Usd,
}

impl Row {
    /// The row a summary keeps (`null`: none), as serde reads it: by the
    /// scanner when it is written as `discuss` writes one (a list of a
    /// large ledger reads tens of thousands).
    pub fn from_summary(json: &str) -> serde_json::Result<Option<Row>> {
        match flat::row(json) {
            Some(row) => Ok(row),
            None => serde_json::from_str(json),
        }
    }

    pub fn of(d: &Discussion) -> Row {
        Row {
            id: d.id.clone(),
            fleet_id: d.root.as_ref().map(|r| r.fleet_id.clone()),
            participants: d
                .root
                .as_ref()
                .map_or_else(Vec::new, |r| vec![r.asker.clone(), r.peer.clone()]),
            status: d.status,
            turns_used: d.turns_used,
            max_turns: d.max_turns(),
            head_message_id: d.head().map(|h| h.message_id.clone()),
            head_to_agent_id: d.head().map(|h| h.to_agent_id.clone()),
            updated_at_ms: d.updated_at_ms,
            escalated: d.escalation.is_some(),
            live_attempt_id: d.live_attempt().map(|a| a.attempt_id.clone()),
            live_attempt_deadline_ms: d.live_attempt().map(|a| a.deadline_ms),
            approval_expires_ms: d
                .approval()
                .filter(|a| a.decision.is_none() && !d.status.is_terminal())
                .map(|a| a.expires_ms),
            live_attempt_delivery: d.live_attempt().and_then(|a| {
                match (a.picked_up_at_ms, a.delivered_at_ms, &a.into) {
                    (Some(_), _, _) => Some("picked_up".to_owned()),
                    (None, Some(_), _) => Some("delivered".to_owned()),
                    (None, None, Some(_)) => Some("undelivered".to_owned()),
                    (None, None, None) => None,
                }
            }),
            tokens: d.spend.tokens(),
            cost_usd: d.spend.cost_usd,
        }
    }
}
