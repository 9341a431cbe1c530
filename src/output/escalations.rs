//! `escalations`: each escalation with its delivery, the object a delivery
//! command reads, and what `escalations deliver` did with each.

use super::approvals::approval_json;
use super::discussion::{EscalationJson, dollars};
use super::text::{printable, relative};
use super::{At, Sink, Style, View};
use crate::clock::format_ms;
use crate::discussion::Discussion;
use crate::operations::approvals::Decided;
use serde::Serialize;
use serde_json::{Value, json};

/// What a person is told of an escalation: the object a delivery command
/// gets on stdin (`cli.md`: discussion, receipt, time, reason, turns,
/// spend, participants, fleet and the last message).
pub(crate) fn escalation_object(d: &Discussion) -> Value {
    let Some(e) = &d.escalation else {
        return Value::Null;
    };
    let root = d.root.as_ref();
    json!({
        "kind": "escalation",
        "discussion_id": d.id,
        "receipt_id": e.receipt_id,
        "at": format_ms(e.at_ms),
        "reason": e.reason,
        "turns_used": e.turns_used,
        "spend": d.spend.to_json(),
        "participants": root.map_or_else(Vec::new, |r| vec![r.asker.clone(), r.peer.clone()]),
        "fleet_id": root.map(|r| r.fleet_id.clone()),
        "last_message": last_message(d),
    })
}

/// The discussion's head as a person is shown it in a handout.
pub(crate) fn last_message(d: &Discussion) -> Value {
    d.head().map_or(Value::Null, |m| {
        json!({"message_id": m.message_id, "turn": m.turn, "from_agent_id": m.from_agent_id,
            "to_agent_id": m.to_agent_id, "type": m.kind.as_str(), "payload": m.body,
            "at": format_ms(m.at_ms)})
    })
}

/// What a person is told of a request that waits for them: the object
/// `escalations deliver` hands its command (APPROVAL, whose turn it is,
/// and the exact commands and HTTP request that decide it).
pub(crate) fn approval_handout(decided: &Decided) -> Value {
    let (d, approval) = (&decided.discussion, &decided.approval);
    let id = &approval.approval_id;
    let root = d.root.as_ref();
    let mut object = approval_json(approval, decided.now_ms);
    let fields = [
        ("kind", json!("approval")),
        ("discussion_id", json!(d.id)),
        ("receipt_id", json!(id)),
        ("at", json!(format_ms(approval.requested_at_ms))),
        ("turns_used", json!(d.turns_used)),
        (
            "participants",
            json!(root.map_or_else(Vec::new, |r| vec![&r.asker, &r.peer])),
        ),
        ("fleet_id", json!(root.map(|r| &r.fleet_id))),
        ("last_message", last_message(d)),
        ("approve_command", json!(format!("discuss approve {id}"))),
        (
            "deny_command",
            json!(format!("discuss deny {id} --reason 'WHY'")),
        ),
        (
            "http",
            json!({"method": "POST", "path": format!("/v1/approvals/{id}"),
                "grant": {"decision": "grant"}, "deny": {"decision": "deny", "reason": "WHY"}}),
        ),
    ];
    for (name, value) in fields {
        object[name] = value;
    }
    object
}

/// The same fields as `DISCUSS_*` variables: text as it is, the rest as
/// JSON (`DISCUSS_SPEND='{"tokens":…}'`).
pub(crate) fn escalation_env(object: &Value) -> Vec<(String, String)> {
    let Value::Object(fields) = object else {
        return Vec::new();
    };
    fields
        .iter()
        .map(|(name, value)| {
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            (format!("DISCUSS_{}", name.to_ascii_uppercase()), text)
        })
        .collect()
}

/// `escalations [--pending]`.
pub(crate) struct EscalationsView {
    pub discussions: Vec<Discussion>,
    pub now_ms: i64,
    /// Discussions due an escalation that nobody recorded yet (ended by
    /// time or turned invalid with no write since): listed as pending,
    /// `"recorded": false`, until a writer records them.
    pub due: Vec<Discussion>,
    /// `--pending`: the delivered ones were left out (said when empty).
    pub pending_only: bool,
}

/// A due escalation not recorded yet, as the discussion would carry it.
fn as_if_recorded(d: &Discussion) -> Discussion {
    let mut d = d.clone();
    d.escalation = Some(crate::discussion::Escalation {
        receipt_id: String::new(),
        at_ms: d.terminal.map_or(d.updated_at_ms, |(_, at)| at),
        turns_used: d.turns_used,
        reason: crate::engine::due_escalation(&d)
            .unwrap_or("invalid")
            .to_owned(),
        delivery: crate::discussion::Delivery::default(),
    });
    d
}

impl Serialize for EscalationsView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let object_of = |d: &Discussion, recorded: bool| {
            let e = d.escalation.as_ref()?;
            let mut object = escalation_object(d);
            object["delivery"] =
                serde_json::to_value(EscalationJson::of(e, self.now_ms)).ok()?["delivery"].take();
            object["recorded"] = recorded.into();
            if !recorded {
                object["receipt_id"] = Value::Null;
            }
            Some(object)
        };
        let due: Vec<Discussion> = self.due.iter().map(as_if_recorded).collect();
        let items: Vec<Value> = due
            .iter()
            .filter_map(|d| object_of(d, false))
            .chain(self.discussions.iter().filter_map(|d| object_of(d, true)))
            .collect();
        json!({ "escalations": items }).serialize(serializer)
    }
}

impl View for EscalationsView {
    /// One block an escalation, not a table: ids stay whole at any width.
    fn human(&self, _style: &Style, out: &mut Sink) {
        if self.discussions.is_empty() && self.due.is_empty() {
            out.text(if self.pending_only {
                "no pending escalations\n"
            } else {
                "no escalations\n"
            });
            return;
        }
        let mut text = String::new();
        let due: Vec<Discussion> = self.due.iter().map(as_if_recorded).collect();
        for (d, recorded) in due
            .iter()
            .map(|d| (d, false))
            .chain(self.discussions.iter().map(|d| (d, true)))
        {
            let Some(e) = &d.escalation else { continue };
            let delivery = match (&e.delivery.delivered, e.delivery.state(self.now_ms)) {
                _ if !recorded => "pending (due, not recorded yet)".to_owned(),
                (Some((at, by)), _) => format!("delivered {} by {by}", relative(*at, self.now_ms)),
                (None, state) if e.delivery.failures > 0 => {
                    format!("{} ({} failed)", state.as_str(), e.delivery.failures)
                }
                (None, state) => state.as_str().to_owned(),
            };
            let participants = d
                .root
                .as_ref()
                .map(|r| format!("{} ⇄ {}", r.asker, r.peer))
                .unwrap_or_default();
            text.push_str(&format!(
                "{}  {}\n  {} after {} · escalated {} · {participants}\n  spend {} tok · {}\n",
                d.id,
                printable(&delivery, false),
                super::discussion::escalation_reason_text(&e.reason),
                super::text::count(u64::from(e.turns_used), "turn", "turns"),
                relative(e.at_ms, self.now_ms),
                d.spend.tokens(),
                dollars(d.spend.cost_usd),
            ));
        }
        out.text(&text);
    }
}

/// One delivery that `escalations deliver` made.
#[derive(Serialize)]
pub(crate) struct DeliveryView {
    /// `escalation` or `approval` (a request handed to a person).
    pub kind: &'static str,
    pub discussion_id: String,
    pub receipt_id: String,
    pub delivered: bool,
    pub exit_code: Option<i32>,
    /// Why it failed: `exit_status`, `timeout` or `spawn_failed`.
    pub reason: Option<String>,
    pub at: At,
}

impl View for DeliveryView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        let what = if self.delivered {
            "delivered".to_owned()
        } else {
            let why = self.reason.as_deref().unwrap_or("failed");
            match self.exit_code {
                Some(code) => format!("delivery failed ({why}, exit {code})"),
                None => format!("delivery failed ({why})"),
            }
        };
        out.text(&format!(
            "{} {} {} of {}: {what}\n",
            format_ms(self.at.0),
            self.kind,
            self.receipt_id,
            self.discussion_id
        ));
    }
}

/// What a one-shot `escalations deliver` pass did, and what it left.
#[derive(Serialize)]
pub(crate) struct DeliveryPassView {
    pub delivered: usize,
    pub failed: usize,
    /// Escalations and approval requests not delivered after the pass
    /// (claimed elsewhere, waiting out a backoff, or failed now).
    pub pending: usize,
    /// When the earliest of them may be tried again.
    pub next_attempt_at: Option<At>,
    #[serde(skip)]
    pub now_ms: i64,
    #[serde(skip)]
    pub status: u8,
}

impl View for DeliveryPassView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        let mut said = Vec::new();
        if self.delivered > 0 {
            said.push(format!("{} delivered", self.delivered));
        }
        if self.failed > 0 {
            said.push(format!("{} failed", self.failed));
        }
        let waiting = self.pending.saturating_sub(self.failed);
        match (self.pending, self.next_attempt_at) {
            (0, _) if said.is_empty() => said.push("nothing pending".to_owned()),
            (0, _) => {}
            (_, Some(At(at))) if waiting > 0 || self.failed > 0 => said.push(format!(
                "{} waiting for its retry at {} ({})",
                self.pending,
                format_ms(at),
                relative(at, self.now_ms)
            )),
            (n, _) => said.push(format!("{n} pending")),
        }
        out.text(&format!("{}\n", said.join("; ")));
    }

    fn exit_status(&self) -> u8 {
        self.status
    }
}
