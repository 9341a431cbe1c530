//! The kill-switches: which engaged switch halts a write or a row (the
//! global one, then a fleet's, an agent's, a discussion's), the refusal it
//! makes, and the scoped switches kept in the ledger-wide state.

use super::{Global, KillSwitchState};
use crate::clock::format_ms;
use crate::error::{Error, ErrorCode, Result};
use crate::record::Scope;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An engaged scoped switch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScopedSwitch {
    pub scope: Scope,
    pub state: KillSwitchState,
}

/// The switch that halts something, and its scope (`None`: global).
#[derive(Debug, Clone, PartialEq)]
pub struct Halt {
    pub scope: Option<Scope>,
    pub state: KillSwitchState,
}

impl Halt {
    /// `"global"` or `{"fleet":F}` and the like.
    pub fn scope_json(&self) -> Value {
        self.scope
            .as_ref()
            .map_or_else(|| Value::from("global"), Scope::to_json)
    }

    /// `{"scope","reason","since","by"}`, as rows and `show` carry it.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "scope": self.scope_json(),
            "reason": self.state.reason,
            "since": self.state.changed_at_ms.map(format_ms),
            "by": self.state.changed_by,
        })
    }

    /// The refusal of a write it covers (`kill_switch_engaged`).
    pub fn refusal(&self) -> Error {
        let reason = self.state.reason.clone().unwrap_or_default();
        let (what, off) = match &self.scope {
            None => (
                "the global kill-switch is engaged".to_owned(),
                "`discuss kill-switch off`".to_owned(),
            ),
            Some(scope) => (
                format!(
                    "the kill-switch of {} {} is engaged",
                    scope.kind(),
                    scope.id()
                ),
                format!(
                    "`discuss kill-switch off --{} {}`",
                    scope.kind(),
                    scope.id()
                ),
            ),
        };
        let mut err = Error::new(ErrorCode::KillSwitchEngaged, format!("{what}: {reason}"))
            .detail("scope", self.scope_json())
            .detail("reason", reason)
            .hint(format!("an operator releases it with {off}"));
        if let Some(at) = self.state.changed_at_ms {
            err = err.detail("changed_at", format_ms(at));
        }
        err
    }
}

/// The kill-switches as a reader saw them: the global one and every
/// engaged scoped one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Switches {
    pub global: KillSwitchState,
    pub scoped: Vec<ScopedSwitch>,
}

impl Switches {
    /// The first engaged switch that covers `what`.
    pub fn halt_of(&self, what: Covered<'_>) -> Option<Halt> {
        first_halt(&self.global, &self.scoped, what)
    }
}

/// The first engaged switch that covers `what`, in the contract's order:
/// global, the fleet, the first agent, the second, the discussion.
fn first_halt(
    global: &KillSwitchState,
    scoped: &[ScopedSwitch],
    what: Covered<'_>,
) -> Option<Halt> {
    if global.engaged {
        return Some(Halt {
            scope: None,
            state: global.clone(),
        });
    }
    if scoped.is_empty() {
        return None;
    }
    let wanted = [
        what.fleet.map(|f| Scope::Fleet(f.to_owned())),
        what.agents[0].map(|a| Scope::Agent(a.to_owned())),
        what.agents[1].map(|a| Scope::Agent(a.to_owned())),
        what.discussion.map(|d| Scope::Discussion(d.to_owned())),
    ];
    wanted.into_iter().flatten().find_map(|scope| {
        scoped.iter().find(|s| s.scope == scope).map(|s| Halt {
            scope: Some(s.scope.clone()),
            state: s.state.clone(),
        })
    })
}

/// What a write or a row is about, for the switches that cover it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Covered<'a> {
    pub fleet: Option<&'a str>,
    /// The agents it involves: an ask's sender and recipient, a
    /// discussion's asker and peer.
    pub agents: [Option<&'a str>; 2],
    pub discussion: Option<&'a str>,
}

impl Global {
    /// Sets a scoped switch to `state` (released: it leaves the list);
    /// returns what it was, when engaged.
    pub(super) fn set_scoped(
        &mut self,
        scope: &Scope,
        state: Option<KillSwitchState>,
    ) -> Option<KillSwitchState> {
        let was = self
            .scoped
            .iter()
            .position(|s| s.scope == *scope)
            .map(|i| self.scoped.remove(i).state);
        if let Some(state) = state.filter(|s| s.engaged) {
            self.scoped.push(ScopedSwitch {
                scope: scope.clone(),
                state,
            });
        }
        was
    }

    /// The first engaged switch that covers `what` (`Switches::halt_of`).
    pub fn halt_of(&self, what: Covered<'_>) -> Option<Halt> {
        first_halt(&self.kill_switch, &self.scoped, what)
    }

    /// The switches alone, for views that mark halted discussions.
    pub fn switches(&self) -> Switches {
        Switches {
            global: self.kill_switch.clone(),
            scoped: self.scoped.clone(),
        }
    }

    /// `kill_switch_engaged` when a switch covers `what`.
    pub fn check_halts(&self, what: Covered<'_>) -> Result<()> {
        match self.halt_of(what) {
            Some(halt) => Err(halt.refusal()),
            None => Ok(()),
        }
    }

    /// `kill_switch_engaged` when the global switch is engaged.
    pub fn check_kill_switch(&self) -> Result<()> {
        self.check_halts(Covered::default())
    }
}
