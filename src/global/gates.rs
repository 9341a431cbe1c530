//! Approval gates in the ledger-wide state: each scope's rule in force,
//! which rule covers a wake, and where each approval request lives (its
//! discussion), so that `approve` and `GET /v1/approvals` find it without
//! reading every discussion.

use super::Global;
use crate::record::{Gate, Scope};
use crate::spend::Usd;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// `--approval-timeout-ms` when a rule gives none: 15 minutes.
pub const DEFAULT_APPROVAL_TIMEOUT_MS: i64 = 900_000;

/// One scope's rule in force.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateRule {
    /// `None`: every wake.
    pub scope: Option<Scope>,
    pub always: bool,
    pub from_turn: Option<u32>,
    pub over_cost_usd: Option<Usd>,
    pub over_tokens: Option<u64>,
    pub approval_timeout_ms: i64,
    pub set_at_ms: i64,
    pub set_by: String,
}

impl GateRule {
    pub fn of(gate: &Gate, at_ms: i64, by: &str) -> GateRule {
        GateRule {
            scope: gate.scope.clone(),
            always: gate.always == Some(true),
            from_turn: gate.from_turn,
            over_cost_usd: gate.over_cost_usd,
            over_tokens: gate.over_tokens,
            approval_timeout_ms: gate
                .approval_timeout_ms
                .unwrap_or(DEFAULT_APPROVAL_TIMEOUT_MS),
            set_at_ms: at_ms,
            set_by: by.to_owned(),
        }
    }

    /// `"global"` or `{"fleet":F}` and the like.
    pub fn scope_json(&self) -> Value {
        self.scope
            .as_ref()
            .map_or_else(|| Value::from("global"), Scope::to_json)
    }

    /// The contract's RULE: `{"scope","always","from_turn",
    /// "over_cost_usd","over_tokens","approval_timeout_ms"}`.
    pub fn to_json(&self) -> Value {
        json!({
            "scope": self.scope_json(),
            "always": self.always,
            "from_turn": self.from_turn,
            "over_cost_usd": self.over_cost_usd.map(|c| c.to_json()),
            "over_tokens": self.over_tokens,
            "approval_timeout_ms": self.approval_timeout_ms,
        })
    }

    /// Whether a wake that would charge `turn`, of a discussion that has
    /// recorded `tokens` and `cost` so far, needs a person's yes.
    pub fn matches(&self, turn: u32, tokens: u64, cost: Usd) -> bool {
        self.always
            || self.from_turn.is_some_and(|from| turn >= from)
            || self.over_cost_usd.is_some_and(|over| cost >= over)
            || self.over_tokens.is_some_and(|over| tokens >= over)
    }
}

/// Where an approval request is, and whether a decision was folded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalPlace {
    pub discussion_id: String,
    pub decided: bool,
}

/// What a wake is: whose turn, in which discussion and fleet.
#[derive(Debug, Clone, Copy)]
pub struct Wakes<'a> {
    pub agent: &'a str,
    pub fleet: &'a str,
    pub discussion: &'a str,
}

impl Global {
    /// Sets (or, with `None`, clears) the rule of `scope`; returns what
    /// it was.
    pub(super) fn set_gate(
        &mut self,
        scope: &Option<Scope>,
        rule: Option<GateRule>,
    ) -> Option<GateRule> {
        let was = self
            .gates
            .iter()
            .position(|g| g.scope == *scope)
            .map(|i| self.gates.remove(i));
        if let Some(rule) = rule {
            self.gates.push(rule);
        }
        was
    }

    /// The rule in force that covers `wake` and matches it, the most
    /// specific first: the discussion's, the agent's, the fleet's, then
    /// the one of every wake.
    pub fn gate_of(&self, wake: Wakes<'_>, turn: u32, tokens: u64, cost: Usd) -> Option<&GateRule> {
        let wanted = [
            Some(Scope::Discussion(wake.discussion.to_owned())),
            Some(Scope::Agent(wake.agent.to_owned())),
            Some(Scope::Fleet(wake.fleet.to_owned())),
            None,
        ];
        wanted.iter().find_map(|scope| {
            self.gates
                .iter()
                .find(|g| g.scope == *scope && g.matches(turn, tokens, cost))
        })
    }

    /// The discussion an approval request was recorded in.
    pub fn approval_place(&self, approval_id: &str) -> Option<&ApprovalPlace> {
        self.approvals.get(approval_id)
    }
}
