//! `events`: one record of the ledger with its discussion's status after it.

use super::text::{clock_time, printable};
use super::{At, Sink, Style, View};
use crate::discussion::Status;
use crate::ledger::Body;
use crate::operations::events::Event;
use crate::record::{CredentialOp, Role};
use serde::Serialize;
use serde_json::Value;

/// A record as an event of the stream.
#[derive(Serialize)]
pub(crate) struct EventView<'a> {
    line: usize,
    at: At,
    kind: &'a str,
    record_id: &'a str,
    discussion_id: Option<&'a str>,
    status: Option<Status>,
    #[serde(flatten)]
    what: What<'a>,
}

/// What the record says, by kind.
#[derive(Serialize)]
#[serde(untagged)]
enum What<'a> {
    Message {
        message_id: &'a str,
        agent_id: &'a str,
        #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
        kind: Option<&'static str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        turn: Option<u32>,
    },
    Receipt {
        receipt: &'a str,
        attempt_id: Option<&'a str>,
        agent_id: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        turn: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        message_id: Option<&'a str>,
        /// What the turn reported it cost, on its terminal receipt.
        #[serde(skip_serializing_if = "Option::is_none")]
        usage: Option<&'a Value>,
        /// On an escalation's delivery receipts.
        #[serde(skip_serializing_if = "Option::is_none")]
        escalation_receipt_id: Option<&'a str>,
    },
    Fleet {
        op: &'static str,
        fleet_id: &'a str,
        agent_id: &'a str,
    },
    KillSwitch {
        engaged: bool,
        reason: Option<&'a str>,
    },
    Quota {
        agent_id: Option<&'a str>,
        wakes_per_hour: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tokens_per_hour: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cost_usd_per_day: Option<Value>,
    },
    /// A token issued or revoked: never its digest.
    Credential {
        op: &'static str,
        token_id: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        agent_id: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        role: Option<&'static str>,
    },
}

impl<'a> EventView<'a> {
    /// The event's record, with its discussion's status after it.
    pub(crate) fn of(event: &Event<'a>) -> EventView<'a> {
        let (record, status) = (event.record, event.status);
        let what = match &record.body {
            Body::Message(m) => What::Message {
                message_id: &record.id,
                agent_id: &m.from_agent_id,
                kind: event.message.map(|(kind, _)| kind.as_str()),
                turn: event.message.map(|(_, turn)| turn),
            },
            Body::Receipt(r) => What::Receipt {
                receipt: &r.receipt,
                attempt_id: r.attempt_id.as_deref(),
                agent_id: r.agent_id.as_deref(),
                turn: r.turn,
                message_id: r.message_id.as_deref(),
                usage: r.usage.as_deref(),
                escalation_receipt_id: r.escalation_receipt_id.as_deref(),
            },
            Body::Fleet(f) => What::Fleet {
                op: f.op.as_str(),
                fleet_id: &f.fleet_id,
                agent_id: &f.agent_id,
            },
            Body::KillSwitch(k) => What::KillSwitch {
                engaged: k.engaged,
                reason: k.reason.as_deref(),
            },
            Body::Quota(q) => What::Quota {
                agent_id: q.agent_id.as_deref(),
                wakes_per_hour: q.wakes_per_hour,
                tokens_per_hour: q.tokens_per_hour,
                cost_usd_per_day: q.cost_usd_per_day.map(crate::spend::Usd::to_json),
            },
            Body::Credential(c) => What::Credential {
                op: match c.op {
                    CredentialOp::Issue => "issue",
                    CredentialOp::Revoke => "revoke",
                },
                token_id: &c.token_id,
                agent_id: c.agent_id.as_deref(),
                role: c.role.map(Role::as_str),
            },
        };
        EventView {
            line: record.line,
            at: At(record.at_ms),
            kind: record.kind(),
            record_id: &record.id,
            discussion_id: record.discussion_id(),
            status,
            what,
        }
    }
}

impl View for EventView<'_> {
    /// One line: line, time, discussion, what happened, status.
    fn human(&self, _style: &Style, out: &mut Sink) {
        let what = match &self.what {
            What::Message {
                agent_id,
                kind,
                turn,
                ..
            } => format!(
                "message {} turn {} from {agent_id}",
                kind.unwrap_or(""),
                turn.map_or("null".to_owned(), |t| t.to_string())
            ),
            What::Receipt {
                receipt, agent_id, ..
            } => {
                let name = receipt.rsplit('.').next().unwrap_or(receipt);
                format!("{name} {}", agent_id.unwrap_or(""))
            }
            What::Fleet {
                op,
                fleet_id,
                agent_id,
            } => format!("fleet {op} {agent_id} in {fleet_id}"),
            // A halt and its release must not read alike.
            What::KillSwitch { engaged, reason } => match (engaged, reason) {
                (true, Some(reason)) => format!("kill-switch ENGAGED: {reason}"),
                (true, None) => "kill-switch ENGAGED".to_owned(),
                (false, _) => "kill-switch released".to_owned(),
            },
            What::Quota {
                agent_id,
                wakes_per_hour,
                tokens_per_hour,
                cost_usd_per_day,
            } => {
                let mut set = Vec::new();
                if let Some(wakes) = wakes_per_hour {
                    set.push(format!("{wakes} wakes/hour"));
                }
                if let Some(tokens) = tokens_per_hour {
                    set.push(format!("{tokens} tokens/hour"));
                }
                if let Some(cost) = cost_usd_per_day {
                    set.push(format!("${cost}/day"));
                }
                format!(
                    "quota {} for {}",
                    set.join(", "),
                    agent_id.unwrap_or("every agent (default)")
                )
            }
            What::Credential {
                op,
                token_id,
                agent_id,
                role,
            } => match (op, agent_id, role) {
                (&"issue", Some(agent), Some(role)) => {
                    format!("token {token_id} issued for {agent} ({role})")
                }
                _ => format!("token {token_id} {op}d"),
            },
        };
        out.text(&format!(
            "{:>6}  {}  {}  {}  {}\n",
            self.line,
            clock_time(self.at.0),
            self.discussion_id.unwrap_or("-"),
            printable(what.trim_end(), false),
            self.status.map_or("", Status::as_str)
        ));
    }
}
