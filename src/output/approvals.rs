//! Approval gates as the contract shows them: a request (`show`'s
//! `approval`, `approve`/`deny`, `GET /v1/approvals`), the list of
//! requests, and `gate list`.

use super::text::printable;
use super::{At, Sink, Style, View};
use crate::clock::format_ms;
use crate::discussion::Approval;
use crate::global::{GateRule, Global};
use crate::operations::approvals::Decided;
use serde::Serialize;
use serde_json::{Value, json};

/// APPROVAL: `{"approval_id","state","requested_at","expires_at",
/// "requested_by","decided_at","decided_by","reason","rule","spend"}`,
/// and whose turn it is about.
pub(crate) fn approval_json(approval: &Approval, now_ms: i64) -> Value {
    let decision = approval.decision.as_ref();
    json!({
        "approval_id": approval.approval_id,
        "state": approval.state(now_ms).as_str(),
        "agent_id": approval.agent_id,
        "head_message_id": approval.head_message_id,
        "turn": approval.turn,
        "requested_at": format_ms(approval.requested_at_ms),
        "expires_at": format_ms(approval.expires_ms),
        "requested_by": approval.requested_by,
        "decided_at": decision.map(|d| format_ms(d.at_ms)),
        "decided_by": decision.map(|d| d.by.clone()),
        "reason": decision.and_then(|d| d.reason.clone()),
        "rule": approval.rule,
        "spend": approval.spend,
        "used_by_attempt_id": approval.used_by,
        "delivery": super::delivery::DeliveryJson::of(&approval.delivery, now_ms),
    })
}

/// One line for a person: the request and its state.
pub(crate) fn approval_line(approval: &Approval, now_ms: i64) -> String {
    let state = approval.state(now_ms).as_str();
    let decided = approval
        .decision
        .as_ref()
        .map(|d| {
            format!(
                " by {} at {}{}",
                printable(&d.by, false),
                format_ms(d.at_ms),
                d.reason
                    .as_deref()
                    .map(|r| format!(": {}", printable(r, false)))
                    .unwrap_or_default()
            )
        })
        .unwrap_or_else(|| format!(" until {}", format_ms(approval.expires_ms)));
    format!(
        "{} {state}{decided} (turn {} of {})",
        approval.approval_id,
        approval.turn,
        printable(&approval.agent_id, false)
    )
}

/// A request with its discussion: `approve`, `deny` and each row of
/// `GET /v1/approvals`.
pub(crate) struct DecidedView(pub Decided);

impl Serialize for DecidedView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        with_discussion(&self.0).serialize(serializer)
    }
}

fn with_discussion(decided: &Decided) -> Value {
    let mut value = approval_json(&decided.approval, decided.now_ms);
    value["discussion_id"] = decided.discussion.id.clone().into();
    value
}

impl View for DecidedView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        out.text(&format!(
            "{} in {}\n",
            approval_line(&self.0.approval, self.0.now_ms),
            self.0.discussion.id
        ));
    }

    fn ids(&self) -> Vec<&str> {
        vec![self.0.approval.approval_id.as_str()]
    }
}

/// `{"approvals":[APPROVAL plus "discussion_id"]}`.
pub(crate) struct ApprovalsView(pub Vec<Decided>);

impl Serialize for ApprovalsView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        json!({ "approvals": self.0.iter().map(with_discussion).collect::<Vec<_>>() })
            .serialize(serializer)
    }
}

impl View for ApprovalsView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        if self.0.is_empty() {
            out.text("no approval requests\n");
            return;
        }
        let mut text = String::new();
        for decided in &self.0 {
            text.push_str(&format!(
                "{} in {}\n",
                approval_line(&decided.approval, decided.now_ms),
                decided.discussion.id
            ));
            if decided.approval.pending_at(decided.now_ms) {
                text.push_str(&format!(
                    "  discuss approve {id}   |   discuss deny {id} --reason TEXT\n",
                    id = decided.approval.approval_id
                ));
            }
        }
        out.text(&text);
    }

    fn ids(&self) -> Vec<&str> {
        self.0
            .iter()
            .map(|d| d.approval.approval_id.as_str())
            .collect()
    }
}

/// When a RULE asks a person, in words: "always or from turn 3".
pub(crate) fn asks_when(rule: &Value) -> String {
    let mut when = Vec::new();
    if rule["always"] == true {
        when.push("always".to_owned());
    }
    if let Some(turn) = rule["from_turn"].as_u64() {
        when.push(format!("from turn {turn}"));
    }
    if !rule["over_cost_usd"].is_null() {
        when.push(format!("spend reaches ${}", rule["over_cost_usd"]));
    }
    if let Some(tokens) = rule["over_tokens"].as_u64() {
        when.push(format!("spend reaches {tokens} tokens"));
    }
    when.join(" or ")
}

/// `gate list`: `{"gates":[RULE plus "set_at","set_by"]}`.
pub(crate) struct GatesView {
    pub gates: Vec<GateRule>,
}

impl From<&Global> for GatesView {
    fn from(global: &Global) -> GatesView {
        GatesView {
            gates: global.gates.clone(),
        }
    }
}

impl Serialize for GatesView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let gates: Vec<Value> = self
            .gates
            .iter()
            .map(|rule| {
                let mut value = rule.to_json();
                value["set_at"] = serde_json::to_value(At(rule.set_at_ms)).unwrap_or_default();
                value["set_by"] = rule.set_by.clone().into();
                value
            })
            .collect();
        json!({ "gates": gates }).serialize(serializer)
    }
}

impl View for GatesView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        if self.gates.is_empty() {
            out.text("no gate: wakes reserve without asking anyone\n");
            return;
        }
        let mut text = String::new();
        for rule in &self.gates {
            let scope = match &rule.scope {
                None => "every wake".to_owned(),
                Some(scope) => format!("{} {}", scope.kind(), printable(scope.id(), false)),
            };
            text.push_str(&format!(
                "gate of {scope}: asks a person when {}; a request waits {} s (set {} by {})\n",
                asks_when(&rule.to_json()),
                rule.approval_timeout_ms / 1000,
                format_ms(rule.set_at_ms),
                printable(&rule.set_by, false)
            ));
        }
        out.text(&text);
    }
}
