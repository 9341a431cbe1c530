//! `events`: one record of the ledger with its discussion's status after it.

use super::json_line::JsonObject;
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
        /// On approval receipts and a reservation a grant let through.
        #[serde(skip_serializing_if = "Option::is_none")]
        approval_id: Option<&'a str>,
        /// Where a live session was told of the turn (a reservation, its
        /// delivery), and how a turn was started (`pickup`).
        #[serde(skip_serializing_if = "Option::is_none")]
        into: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        via: Option<&'a str>,
    },
    /// An approval gate set (its rule) or cleared.
    Gate {
        engaged: bool,
        /// `"global"`, or `{"fleet":F}` and the like.
        scope: Value,
    },
    Fleet {
        op: &'static str,
        fleet_id: &'a str,
        agent_id: &'a str,
    },
    KillSwitch {
        engaged: bool,
        reason: Option<&'a str>,
        /// `"global"`, or `{"fleet":F}` and the like.
        scope: Value,
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
    /// The lines after it were imported (`ledger import`).
    Import { lines: u64 },
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
                approval_id: r.approval_id.as_deref(),
                into: r.into.as_deref(),
                via: r.via.as_deref(),
            },
            Body::Gate(g) => What::Gate {
                engaged: g.engaged,
                scope: g
                    .scope
                    .as_ref()
                    .map_or_else(|| Value::from("global"), crate::record::Scope::to_json),
            },
            Body::Fleet(f) => What::Fleet {
                op: f.op.as_str(),
                fleet_id: &f.fleet_id,
                agent_id: &f.agent_id,
            },
            Body::KillSwitch(k) => What::KillSwitch {
                engaged: k.engaged,
                reason: k.reason.as_deref(),
                scope: k
                    .scope
                    .as_ref()
                    .map_or_else(|| Value::from("global"), crate::record::Scope::to_json),
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
            Body::Import(i) => What::Import { lines: i.lines },
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

impl EventView<'_> {
    /// Its JSON by hand, as serde writes the fields above: flattened,
    /// `None` as `null` but where serde skips it.
    fn write_json(&self, out: &mut Vec<u8>) -> bool {
        let mut o = JsonObject::open(out);
        o.uint("line", self.line as u64);
        o.time("at", self.at.0);
        o.str("kind", self.kind);
        o.str("record_id", self.record_id);
        o.opt_str("discussion_id", self.discussion_id);
        o.opt_str("status", self.status.map(Status::as_str));
        match &self.what {
            What::Message {
                message_id,
                agent_id,
                kind,
                turn,
            } => {
                o.str("message_id", message_id);
                o.str("agent_id", agent_id);
                o.str_if("type", *kind);
                o.uint_if("turn", turn.map(u64::from));
            }
            What::Receipt {
                receipt,
                attempt_id,
                agent_id,
                turn,
                message_id,
                usage,
                escalation_receipt_id,
                approval_id,
                into,
                via,
            } => {
                o.str("receipt", receipt);
                o.opt_str("attempt_id", *attempt_id);
                o.opt_str("agent_id", *agent_id);
                o.uint_if("turn", turn.map(u64::from));
                o.str_if("message_id", *message_id);
                if let Some(usage) = usage
                    && !o.value("usage", usage)
                {
                    return false;
                }
                o.str_if("escalation_receipt_id", *escalation_receipt_id);
                o.str_if("approval_id", *approval_id);
                o.str_if("into", *into);
                o.str_if("via", *via);
            }
            What::Gate { engaged, scope } => {
                o.bool("engaged", *engaged);
                o.value("scope", scope);
            }
            What::Fleet {
                op,
                fleet_id,
                agent_id,
            } => {
                o.str("op", op);
                o.str("fleet_id", fleet_id);
                o.str("agent_id", agent_id);
            }
            What::KillSwitch {
                engaged,
                reason,
                scope,
            } => {
                o.bool("engaged", *engaged);
                o.opt_str("reason", *reason);
                o.value("scope", scope);
            }
            What::Quota {
                agent_id,
                wakes_per_hour,
                tokens_per_hour,
                cost_usd_per_day,
            } => {
                o.opt_str("agent_id", *agent_id);
                o.opt_uint("wakes_per_hour", wakes_per_hour.map(u64::from));
                o.uint_if("tokens_per_hour", *tokens_per_hour);
                if let Some(cost) = cost_usd_per_day
                    && !o.value("cost_usd_per_day", cost)
                {
                    return false;
                }
            }
            What::Credential {
                op,
                token_id,
                agent_id,
                role,
            } => {
                o.str("op", op);
                o.str("token_id", token_id);
                o.str_if("agent_id", *agent_id);
                o.str_if("role", *role);
            }
            What::Import { lines } => o.uint("lines", *lines),
        }
        o.close();
        true
    }
}

impl View for EventView<'_> {
    fn json_by_hand(&self, out: &mut Sink) -> bool {
        self.write_json(out.by_hand())
    }

    /// One line: line, time, discussion, what happened, status.
    fn human(&self, style: &Style, out: &mut Sink) {
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
                receipt,
                agent_id,
                into,
                via,
                ..
            } => {
                let name = receipt.rsplit('.').next().unwrap_or(receipt);
                let mut line = format!("{name} {}", agent_id.unwrap_or(""));
                if let Some(into) = into {
                    line.push_str(&format!(" into {}", printable(into, false)));
                }
                if let Some(via) = via {
                    line.push_str(&format!(" by {}", printable(via, false)));
                }
                line
            }
            What::Fleet {
                op,
                fleet_id,
                agent_id,
            } => format!("fleet {op} {agent_id} in {fleet_id}"),
            What::Import { lines } => format!("import of the {lines} lines after this one"),
            What::Gate { engaged, scope } => {
                let which = match scope.as_object().and_then(|o| o.iter().next()) {
                    Some((kind, id)) => format!("gate of {kind} {}", id.as_str().unwrap_or("")),
                    None => "gate of every wake".to_owned(),
                };
                if *engaged {
                    format!("{which} set")
                } else {
                    format!("{which} cleared")
                }
            }
            // A halt and its release must not read alike.
            What::KillSwitch {
                engaged,
                reason,
                scope,
            } => {
                let which = match scope.as_object().and_then(|o| o.iter().next()) {
                    Some((kind, id)) => {
                        format!("kill-switch of {kind} {}", id.as_str().unwrap_or(""))
                    }
                    None => "kill-switch".to_owned(),
                };
                match (engaged, reason) {
                    (true, Some(reason)) => format!("{which} ENGAGED: {reason}"),
                    (true, None) => format!("{which} ENGAGED"),
                    (false, _) => format!("{which} released"),
                }
            }
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
        let rest = format!(
            "{}  {}  {}  {}",
            clock_time(self.at.0),
            self.discussion_id.unwrap_or("-"),
            printable(what.trim_end(), false),
            self.status.map_or("", Status::as_str)
        );
        let rest = rest.trim_end();
        // On a terminal, a line wider than it is wrapped here, at word
        // boundaries and indented under the time, not cut by the terminal.
        let line = format!("{:>6}  ", self.line);
        out.text(&super::text::hanging(&line, rest, line.len(), style.width));
    }
}

/// Whether the JSON of `event` written by hand is serde's, byte for byte:
/// the fuzz target asks it of every record of every input.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn json_by_hand_as_serde(event: &Event<'_>) -> bool {
    let view = EventView::of(event);
    let mut by_hand = Vec::new();
    view.write_json(&mut by_hand) && serde_json::to_vec(&view).ok() == Some(by_hand)
}

/// A discussion a stream has shown reached `deadman` or `expired` by time,
/// with no record to say so: `{"event":"status","discussion_id","status",
/// "at"}`, and for a person a line like a record's, without a line number.
pub(crate) struct TimedEndView<'a>(pub &'a crate::operations::events::TimedEnd);

impl Serialize for TimedEndView<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serde_json::json!({
            "event": "status",
            "discussion_id": self.0.discussion_id,
            "status": self.0.status.as_str(),
            "at": crate::clock::format_ms(self.0.at_ms),
        })
        .serialize(serializer)
    }
}

impl View for TimedEndView<'_> {
    fn human(&self, _style: &Style, out: &mut Sink) {
        out.text(&format!(
            "{:>6}  {}  {}  {}\n",
            "-",
            clock_time(self.0.at_ms),
            self.0.discussion_id,
            self.0.status.as_str()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discussion::MessageType;
    use crate::record::Record;

    /// Every kind of record, with the fields serde skips and the ones it
    /// writes as `null`, and strings with something to escape.
    #[test]
    fn event_lines_by_hand_are_serdes() {
        let lines = [
            r#"{"v":1,"kind":"message","id":"msg_\"1\"","at_ms":1792540809442,"by":"b","fleet_id":"f","from_agent_id":"a\\b","to_agent_id":"c","correlation_id":"dsc_1","payload":"{}"}"#,
            r#"{"v":1,"kind":"message","id":"msg_2","at_ms":-5,"by":"b","fleet_id":"f","from_agent_id":"a","to_agent_id":"c","payload":"{}"}"#,
            r#"{"v":1,"kind":"receipt","id":"r1","at_ms":1,"by":"b","receipt":"discussion.attempt.completed","discussion_id":"dsc_1","attempt_id":"att_1","agent_id":"b","turn":2,"message_id":"msg_2","usage":{"input_tokens":10,"cost_usd":"0.25","x":[1.5,{"y":null}]}}"#,
            r#"{"v":1,"kind":"receipt","id":"r2","at_ms":1,"by":"b","receipt":"discussion.escalation.delivered","discussion_id":"dsc_1","escalation_receipt_id":"r9"}"#,
            r#"{"v":1,"kind":"fleet","id":"f1","at_ms":1,"by":"op","op":"remove","fleet_id":"f","agent_id":"a"}"#,
            r#"{"v":1,"kind":"kill_switch","id":"k1","at_ms":1,"by":"op","engaged":true,"reason":"tab\there \u0001"}"#,
            r#"{"v":1,"kind":"kill_switch","id":"k2","at_ms":1,"by":"op","engaged":false}"#,
            r#"{"v":1,"kind":"quota","id":"q1","at_ms":1,"by":"op","agent_id":"a","wakes_per_hour":7,"tokens_per_hour":18446744073709551615,"cost_usd_per_day":12.50}"#,
            r#"{"v":1,"kind":"quota","id":"q2","at_ms":1,"by":"op","tokens_per_hour":5}"#,
            r#"{"v":1,"kind":"credential","id":"c1","at_ms":1,"by":"op","op":"issue","token_id":"t","agent_id":"a","role":"agent","sha256":"ab","expires_ms":5}"#,
            r#"{"v":1,"kind":"credential","id":"c2","at_ms":1,"by":"op","op":"revoke","token_id":"t"}"#,
        ];
        for line in lines {
            let record =
                Record::parse(line.as_bytes(), 12).unwrap_or_else(|e| panic!("{e}: {line}"));
            for (status, message) in [
                (None, None),
                (Some(Status::Active), Some((MessageType::Question, 3))),
            ] {
                let event = Event {
                    record: &record,
                    status,
                    message,
                };
                assert!(json_by_hand_as_serde(&event), "{line}");
            }
        }
    }
}
