//! State that is not one discussion's: fleets, the kill-switch, quotas and
//! the wake reservations that quotas count.

use crate::clock::format_ms;
use crate::error::{Error, ErrorCode, Result};
use crate::record::{Body, CredentialOp, FleetOp, ReceiptKind, Record, Role, Scope};
use crate::spend::{Usage, Usd};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

mod gates;
mod switches;
pub use gates::{ApprovalPlace, DEFAULT_APPROVAL_TIMEOUT_MS, GateRule, Wakes};
pub use switches::{Covered, Halt, ScopedSwitch, Switches};

pub const DEFAULT_WAKES_PER_HOUR: u32 = 30;
pub const QUOTA_WINDOW_MS: i64 = 3_600_000;
/// How many of the latest fleet, kill-switch and quota changes are kept
/// with what they replaced, so that a reader whose clock they are ahead of
/// can see them undone (`ledger.md`, "Clock skew"). A change ahead of the
/// clock that more changes than this follow stays applied.
pub const RECENT_CHANGES: usize = 32;

/// One fleet, kill-switch or quota change and what it replaced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub at_ms: i64,
    pub undo: Undo,
}

/// The value a change replaced, for the one setting it changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Undo {
    Member {
        fleet_id: String,
        agent_id: String,
        was_member: bool,
    },
    KillSwitch(KillSwitchState),
    /// A scoped switch, and whether (and how) it was engaged before.
    ScopedKillSwitch {
        scope: Scope,
        was: Option<KillSwitchState>,
    },
    Quota {
        agent_id: Option<String>,
        was: Option<u32>,
    },
    TokenCap {
        agent_id: Option<String>,
        was: Option<u64>,
    },
    CostCap {
        agent_id: Option<String>,
        was: Option<Usd>,
    },
    /// An approval gate's rule of one scope, and what it was before.
    Gate {
        scope: Option<Scope>,
        was: Option<GateRule>,
    },
}

impl Undo {
    /// The setting it is about: two changes of one setting share it.
    fn setting(&self) -> (u8, Option<&str>, Option<&str>) {
        match self {
            Undo::Member {
                fleet_id, agent_id, ..
            } => (0, Some(fleet_id), Some(agent_id)),
            Undo::KillSwitch(_) => (1, None, None),
            Undo::ScopedKillSwitch { scope, .. } => (
                match scope {
                    Scope::Fleet(_) => 5,
                    Scope::Agent(_) => 6,
                    Scope::Discussion(_) => 7,
                },
                Some(scope.id()),
                None,
            ),
            Undo::Quota { agent_id, .. } => (2, agent_id.as_deref(), None),
            Undo::TokenCap { agent_id, .. } => (3, agent_id.as_deref(), None),
            Undo::CostCap { agent_id, .. } => (4, agent_id.as_deref(), None),
            Undo::Gate { scope, .. } => (
                match scope {
                    None => 8,
                    Some(Scope::Fleet(_)) => 9,
                    Some(Scope::Agent(_)) => 10,
                    Some(Scope::Discussion(_)) => 11,
                },
                scope.as_ref().map(Scope::id),
                None,
            ),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KillSwitchState {
    pub engaged: bool,
    pub reason: Option<String>,
    pub changed_at_ms: Option<i64>,
    pub changed_by: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Global {
    pub fleets: BTreeMap<String, BTreeSet<String>>,
    pub kill_switch: KillSwitchState,
    /// The default quota, when one was ever set.
    pub default_quota: Option<u32>,
    pub agent_quotas: BTreeMap<String, u32>,
    /// `at_ms` of every wake reservation, per woken agent.
    pub reservations: HashMap<String, Vec<i64>>,
    /// The latest changes of fleets, the kill-switch and quotas, newest
    /// last, with what each replaced.
    #[serde(default)]
    pub recent: VecDeque<Change>,
    /// `serve`'s tokens by id, issued and revoked.
    #[serde(default)]
    pub credentials: BTreeMap<String, CredentialState>,
    /// Whether `credentials` holds every credential record folded. A
    /// state saved by an earlier version lacks the field (it dropped those
    /// records as unreadable): it reads `false`, and the state is folded
    /// anew rather than trusted, so a revocation is never forgotten.
    #[serde(default)]
    pub credentials_known: bool,
    /// Spend caps: tokens per rolling hour, dollars per rolling day.
    #[serde(default)]
    pub token_caps: Caps<u64>,
    #[serde(default)]
    pub cost_caps: Caps<Usd>,
    /// What each agent's turns reported they cost, per woken agent:
    /// `(at_ms, tokens, nano-dollars)`, the last day of it.
    #[serde(default)]
    pub spent: HashMap<String, Vec<(i64, u64, u64)>>,
    /// Whether `spent` and the caps hold every record folded; a state
    /// saved before spend existed reads `false` and is folded anew.
    #[serde(default)]
    pub spend_known: bool,
    /// The scoped kill-switches that are engaged, in the order they were
    /// engaged (each scope's latest record wins).
    #[serde(default)]
    pub scoped: Vec<ScopedSwitch>,
    /// Whether `scoped` holds every record folded; a state saved before
    /// scoped switches existed reads `false` and is folded anew (such a
    /// version took a scoped record for the global switch).
    #[serde(default)]
    pub scopes_known: bool,
    /// Each scope's approval gate in force, in the order they were set.
    #[serde(default)]
    pub gates: Vec<GateRule>,
    /// Every approval request by its id: its discussion, and whether it
    /// was decided.
    #[serde(default)]
    pub approvals: BTreeMap<String, ApprovalPlace>,
    /// Whether `gates` and `approvals` hold every record folded; a state
    /// saved before gates existed reads `false` and is folded anew.
    #[serde(default)]
    pub gates_known: bool,
}

/// A cap of every agent without its own, and those of agents with one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(
    serialize = "T: Serialize",
    deserialize = "T: serde::de::DeserializeOwned"
))]
pub struct Caps<T> {
    pub default: Option<T>,
    pub agents: BTreeMap<String, T>,
}

impl<T> Default for Caps<T> {
    fn default() -> Caps<T> {
        Caps {
            default: None,
            agents: BTreeMap::new(),
        }
    }
}

impl<T: Copy> Caps<T> {
    pub fn of(&self, agent: &str) -> Option<T> {
        self.agents.get(agent).copied().or(self.default)
    }

    /// Sets (or, with `None`, unsets) a cap; returns what it was.
    fn set(&mut self, agent: Option<&str>, cap: Option<T>) -> Option<T> {
        match (agent, cap) {
            (Some(agent), Some(cap)) => self.agents.insert(agent.to_owned(), cap),
            (Some(agent), None) => self.agents.remove(agent),
            (None, cap) => std::mem::replace(&mut self.default, cap),
        }
    }
}

/// The rolling windows of the spend caps.
pub const TOKEN_WINDOW_MS: i64 = 3_600_000;
pub const COST_WINDOW_MS: i64 = 86_400_000;

impl Default for Global {
    fn default() -> Global {
        Global {
            fleets: BTreeMap::new(),
            kill_switch: KillSwitchState::default(),
            default_quota: None,
            agent_quotas: BTreeMap::new(),
            reservations: HashMap::new(),
            recent: VecDeque::new(),
            credentials: BTreeMap::new(),
            credentials_known: true,
            token_caps: Caps::default(),
            cost_caps: Caps::default(),
            spent: HashMap::new(),
            spend_known: true,
            scoped: Vec::new(),
            scopes_known: true,
            gates: Vec::new(),
            approvals: BTreeMap::new(),
            gates_known: true,
        }
    }
}

/// One token as the ledger knows it (never the token: its digest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CredentialState {
    pub agent_id: String,
    pub role: Role,
    pub sha256: String,
    pub expires_ms: Option<i64>,
    pub issued_at_ms: i64,
    pub issued_by: String,
    pub revoked_at_ms: Option<i64>,
}

impl CredentialState {
    /// `active`, `expired` or `revoked` at `now_ms`.
    pub fn state(&self, now_ms: i64) -> &'static str {
        if self.revoked_at_ms.is_some() {
            "revoked"
        } else if self.expires_ms.is_some_and(|e| e <= now_ms) {
            "expired"
        } else {
            "active"
        }
    }
}

impl Global {
    /// Whether a saved state was folded by a version that folds every
    /// record this one does; one that is not is folded anew, never trusted
    /// (it skipped credentials, spend, scoped switches or gates).
    pub fn folds_everything(&self) -> bool {
        self.credentials_known && self.spend_known && self.scopes_known && self.gates_known
    }

    pub fn derive(records: &[Record]) -> Global {
        let mut global = Global::default();
        for record in records {
            global.apply(record);
        }
        global
    }

    /// Folds one record in; writers apply what they append to the state
    /// they derived, rather than deriving the whole ledger again.
    pub fn apply(&mut self, record: &Record) {
        let undo = match &record.body {
            Body::Fleet(change) => {
                let was_member = self
                    .fleets
                    .get(&change.fleet_id)
                    .is_some_and(|m| m.contains(&change.agent_id));
                self.set_member(
                    &change.fleet_id,
                    &change.agent_id,
                    change.op == FleetOp::Add,
                );
                Undo::Member {
                    fleet_id: change.fleet_id.clone(),
                    agent_id: change.agent_id.clone(),
                    was_member,
                }
            }
            Body::KillSwitch(switch) => {
                let state = KillSwitchState {
                    engaged: switch.engaged,
                    reason: switch.reason.clone(),
                    changed_at_ms: Some(record.at_ms),
                    changed_by: Some(record.by.clone()),
                };
                match &switch.scope {
                    None => Undo::KillSwitch(std::mem::replace(&mut self.kill_switch, state)),
                    Some(scope) => Undo::ScopedKillSwitch {
                        scope: scope.clone(),
                        was: self.set_scoped(scope, Some(state)),
                    },
                }
            }
            Body::Quota(quota) => {
                let agent = quota.agent_id.as_deref();
                let mut undos = Vec::new();
                if let Some(wakes) = quota.wakes_per_hour {
                    undos.push(Undo::Quota {
                        agent_id: quota.agent_id.clone(),
                        was: self.set_quota(agent, Some(wakes)),
                    });
                }
                if let Some(tokens) = quota.tokens_per_hour {
                    undos.push(Undo::TokenCap {
                        agent_id: quota.agent_id.clone(),
                        was: self.token_caps.set(agent, Some(tokens)),
                    });
                }
                if let Some(cost) = quota.cost_usd_per_day {
                    undos.push(Undo::CostCap {
                        agent_id: quota.agent_id.clone(),
                        was: self.cost_caps.set(agent, Some(cost)),
                    });
                }
                for undo in undos {
                    self.remember(record.at_ms, undo);
                }
                return;
            }
            Body::Credential(credential) => {
                match credential.op {
                    CredentialOp::Issue => {
                        // An issue without its fields grants nothing; a
                        // second issue of one id never replaces the first.
                        if let (Some(agent_id), Some(role), Some(sha256)) =
                            (&credential.agent_id, credential.role, &credential.sha256)
                            && !self.credentials.contains_key(&credential.token_id)
                        {
                            self.credentials.insert(
                                credential.token_id.clone(),
                                CredentialState {
                                    agent_id: agent_id.clone(),
                                    role,
                                    sha256: sha256.to_ascii_lowercase(),
                                    expires_ms: credential.expires_ms,
                                    issued_at_ms: record.at_ms,
                                    issued_by: record.by.clone(),
                                    revoked_at_ms: None,
                                },
                            );
                        }
                    }
                    CredentialOp::Revoke => {
                        if let Some(state) = self.credentials.get_mut(&credential.token_id)
                            && state.revoked_at_ms.is_none()
                        {
                            state.revoked_at_ms = Some(record.at_ms);
                        }
                    }
                }
                return;
            }
            Body::Receipt(receipt) if receipt.kind() == Some(ReceiptKind::Reserved) => {
                if let Some(agent) = &receipt.agent_id {
                    self.reservations
                        .entry(agent.clone())
                        .or_default()
                        .push(record.at_ms);
                }
                return;
            }
            Body::Gate(gate) => {
                let rule = gate
                    .engaged
                    .then(|| GateRule::of(gate, record.at_ms, &record.by));
                Undo::Gate {
                    scope: gate.scope.clone(),
                    was: self.set_gate(&gate.scope, rule),
                }
            }
            Body::Receipt(receipt) if receipt.kind() == Some(ReceiptKind::ApprovalRequested) => {
                self.approvals
                    .entry(record.id.clone())
                    .or_insert_with(|| ApprovalPlace {
                        discussion_id: receipt.discussion_id.clone(),
                        decided: false,
                    });
                return;
            }
            Body::Receipt(receipt)
                if matches!(
                    receipt.kind(),
                    Some(ReceiptKind::ApprovalGranted | ReceiptKind::ApprovalDenied)
                ) =>
            {
                // Only a decision in the request's own discussion counts.
                if let Some(place) = receipt
                    .approval_id
                    .as_ref()
                    .and_then(|id| self.approvals.get_mut(id))
                    && place.discussion_id == receipt.discussion_id
                {
                    place.decided = true;
                }
                return;
            }
            Body::Receipt(receipt) => {
                // What a turn reported it cost counts against its agent's
                // caps (a usage that is not one counts nothing).
                if let (Some(agent), Some(usage)) = (&receipt.agent_id, &receipt.usage)
                    && let Ok(usage) = Usage::from_json(usage)
                    && !usage.is_empty()
                {
                    self.spent.entry(agent.clone()).or_default().push((
                        record.at_ms,
                        usage.tokens(),
                        usage.cost_usd.unwrap_or(Usd::ZERO).nanos(),
                    ));
                }
                return;
            }
            _ => return,
        };
        self.remember(record.at_ms, undo);
    }

    fn remember(&mut self, at_ms: i64, undo: Undo) {
        self.recent.push_back(Change { at_ms, undo });
        if self.recent.len() > RECENT_CHANGES {
            self.recent.pop_front();
        }
    }

    fn set_member(&mut self, fleet_id: &str, agent_id: &str, member: bool) {
        if member {
            self.fleets
                .entry(fleet_id.to_owned())
                .or_default()
                .insert(agent_id.to_owned());
        } else if let Some(members) = self.fleets.get_mut(fleet_id) {
            members.remove(agent_id);
            // A fleet exists while it has at least one member.
            if members.is_empty() {
                self.fleets.remove(fleet_id);
            }
        }
    }

    /// Sets (or, with `None`, unsets) a quota; returns what it was.
    fn set_quota(&mut self, agent_id: Option<&str>, quota: Option<u32>) -> Option<u32> {
        match (agent_id, quota) {
            (Some(agent), Some(quota)) => self.agent_quotas.insert(agent.to_owned(), quota),
            (Some(agent), None) => self.agent_quotas.remove(agent),
            (None, quota) => std::mem::replace(&mut self.default_quota, quota),
        }
    }

    /// The state as a reader at `now_ms` sees it: changes stamped more
    /// than the allowed skew ahead of it are undone, unless a later change
    /// of the same setting that is not ahead replaced them anyway.
    pub fn at(&self, now_ms: i64) -> Cow<'_, Global> {
        let limit = now_ms.saturating_add(crate::clock::MAX_SKEW_MS);
        if self.recent.iter().all(|c| c.at_ms <= limit) {
            return Cow::Borrowed(self);
        }
        let mut seen = self.clone();
        seen.recent.clear();
        let mut settled = HashSet::new();
        for change in self.recent.iter().rev() {
            let setting = change.undo.setting();
            if change.at_ms <= limit {
                settled.insert(setting);
                continue;
            }
            if settled.contains(&setting) {
                continue;
            }
            match &change.undo {
                Undo::Member {
                    fleet_id,
                    agent_id,
                    was_member,
                } => seen.set_member(fleet_id, agent_id, *was_member),
                Undo::KillSwitch(was) => seen.kill_switch = was.clone(),
                Undo::ScopedKillSwitch { scope, was } => {
                    seen.set_scoped(scope, was.clone());
                }
                Undo::Quota { agent_id, was } => {
                    seen.set_quota(agent_id.as_deref(), *was);
                }
                Undo::TokenCap { agent_id, was } => {
                    seen.token_caps.set(agent_id.as_deref(), *was);
                }
                Undo::CostCap { agent_id, was } => {
                    seen.cost_caps.set(agent_id.as_deref(), *was);
                }
                Undo::Gate { scope, was } => {
                    seen.set_gate(scope, was.clone());
                }
            }
        }
        Cow::Owned(seen)
    }

    /// Forgets reservations no rolling hour can count any more: those an
    /// hour older than the same agent's newest one. Per agent, so that a
    /// reservation stamped far ahead (a skewed clock) makes only that
    /// agent's history shorter, never every agent's.
    pub fn forget_old_reservations(&mut self) {
        self.reservations.retain(|_, times| {
            let newest = times.iter().copied().max().unwrap_or(i64::MIN);
            times.retain(|&t| t > newest.saturating_sub(QUOTA_WINDOW_MS));
            !times.is_empty()
        });
        // Spend counts for a day (the longer of its two windows).
        self.spent.retain(|_, entries| {
            let newest = entries.iter().map(|e| e.0).max().unwrap_or(i64::MIN);
            entries.retain(|e| e.0 > newest.saturating_sub(COST_WINDOW_MS));
            !entries.is_empty()
        });
    }

    /// What `agent`'s turns reported in the rolling window of `cap`
    /// (`(now - window, now]`), oldest first: `(at_ms, amount)`.
    fn spent_in_window(&self, agent: &str, now_ms: i64, cap: &SpendCap) -> Vec<(i64, u64)> {
        let mut entries: Vec<(i64, u64)> = self
            .spent
            .get(agent)
            .map(|all| {
                all.iter()
                    .filter(|e| e.0 > now_ms - cap.window_ms && e.0 <= now_ms)
                    .map(|e| (e.0, (cap.amount)(e)))
                    .filter(|e| e.1 > 0)
                    .collect()
            })
            .unwrap_or_default();
        entries.sort_unstable();
        entries
    }

    /// Tokens and dollars `agent` reported in its two windows.
    pub fn spend_of(&self, agent: &str, now_ms: i64) -> (u64, Usd) {
        let sum = |cap: &SpendCap| total(&self.spent_in_window(agent, now_ms, cap));
        (sum(&TOKEN_CAP), Usd::from_nanos(sum(&COST_CAP)))
    }

    /// `spend_quota_exceeded` when what `agent`'s turns reported in a
    /// window already reaches its cap (checked after the wake quota);
    /// details carry `retry_after_ms`, `window`, `limit` and `spent`.
    pub fn check_spend_quota(&self, agent: &str, now_ms: i64) -> Result<()> {
        let limits = [
            (&TOKEN_CAP, self.token_caps.of(agent)),
            (&COST_CAP, self.cost_caps.of(agent).map(Usd::nanos)),
        ];
        for (cap, limit) in limits {
            if let Some(limit) = limit {
                cap.check(
                    agent,
                    now_ms,
                    &self.spent_in_window(agent, now_ms, cap),
                    limit,
                )?;
            }
        }
        Ok(())
    }

    pub fn members(&self, fleet_id: &str) -> Option<&BTreeSet<String>> {
        self.fleets.get(fleet_id)
    }

    pub fn quota_of(&self, agent: &str) -> u32 {
        self.agent_quotas
            .get(agent)
            .copied()
            .unwrap_or(self.default_quota.unwrap_or(DEFAULT_WAKES_PER_HOUR))
    }

    /// Reservations of `agent` in the rolling hour `(now - 60 min, now]`.
    pub fn wakes_in_window(&self, agent: &str, now_ms: i64) -> Vec<i64> {
        let mut times: Vec<i64> = self
            .reservations
            .get(agent)
            .map(|all| {
                all.iter()
                    .copied()
                    .filter(|&t| t > now_ms - QUOTA_WINDOW_MS && t <= now_ms)
                    .collect()
            })
            .unwrap_or_default();
        times.sort_unstable();
        times
    }

    /// `wake_quota_exceeded` when one more reservation for `agent` would
    /// pass its hourly quota; details carry `retry_after_ms`.
    pub fn check_quota(&self, agent: &str, now_ms: i64) -> Result<()> {
        let quota = self.quota_of(agent);
        let window = self.wakes_in_window(agent, now_ms);
        if (window.len() as u64) < u64::from(quota) {
            return Ok(());
        }
        let mut err = Error::new(
            ErrorCode::WakeQuotaExceeded,
            format!(
                "{agent} was woken {} in the last hour; its quota is {quota}",
                match window.len() {
                    1 => "once".to_owned(),
                    n => format!("{n} times"),
                }
            ),
        )
        .detail("agent_id", agent)
        .detail("wakes_per_hour", quota)
        .detail("wakes_in_window", window.len());
        if quota == 0 {
            err = err
                .detail("retry_after_ms", serde_json::Value::Null)
                .hint(format!(
                    "the quota of {agent} is 0; raise it with `discuss quota set N --agent {agent}`"
                ));
        } else {
            // The window drops below the quota when its oldest surplus
            // reservation leaves it.
            let leaving = window[window.len() - quota as usize];
            let retry_at = leaving + QUOTA_WINDOW_MS;
            err = err
                .detail("retry_after_ms", retry_at - now_ms)
                .detail("retry_at", format_ms(retry_at))
                .hint(format!(
                    "the next wake of {agent} is allowed at {}",
                    format_ms(retry_at)
                ));
        }
        Err(err)
    }
}

/// One spend cap: its window, what it measures of a spend entry, and how
/// its amounts are shown.
struct SpendCap {
    window_ms: i64,
    /// `hour` or `day`, as `details.window` says.
    window: &'static str,
    measure: &'static str,
    flag: &'static str,
    amount: fn(&(i64, u64, u64)) -> u64,
    show: fn(u64) -> Value,
}

const TOKEN_CAP: SpendCap = SpendCap {
    window_ms: TOKEN_WINDOW_MS,
    window: "hour",
    measure: "tokens",
    flag: "--tokens-per-hour N",
    amount: |e| e.1,
    show: Value::from,
};

const COST_CAP: SpendCap = SpendCap {
    window_ms: COST_WINDOW_MS,
    window: "day",
    measure: "dollars",
    flag: "--cost-usd-per-day X",
    amount: |e| e.2,
    show: |nanos| Usd::from_nanos(nanos).to_json(),
};

fn total(entries: &[(i64, u64)]) -> u64 {
    entries.iter().fold(0u64, |s, e| s.saturating_add(e.1))
}

impl SpendCap {
    /// Refuses when the amounts in the window sum to `limit` or more; the
    /// retry time is when enough of them have left the window to be below
    /// it.
    fn check(&self, agent: &str, now_ms: i64, entries: &[(i64, u64)], limit: u64) -> Result<()> {
        let spent = total(entries);
        if spent < limit {
            return Ok(());
        }
        let show = self.show;
        let mut err = Error::new(
            ErrorCode::SpendQuotaExceeded,
            format!(
                "{agent} reported {} {} in the last {}; its cap is {}",
                show(spent),
                self.measure,
                self.window,
                show(limit)
            ),
        )
        .detail("agent_id", agent)
        .detail("window", self.window)
        .detail("limit", show(limit))
        .detail("spent", show(spent));
        let mut left = spent;
        let leaving = entries.iter().find(|e| {
            left = left.saturating_sub(e.1);
            left < limit
        });
        match leaving {
            Some(&(at, _)) => {
                let retry_at = at + self.window_ms;
                err = err
                    .detail("retry_after_ms", retry_at - now_ms)
                    .detail("retry_at", format_ms(retry_at));
            }
            // A cap of 0 is never below what was spent.
            None => err = err.detail("retry_after_ms", Value::Null),
        }
        Err(err.hint(format!(
            "raise the cap with `discuss quota set {} --agent {agent}`",
            self.flag
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn global_with(reservations: &[i64], quota: u32) -> Global {
        let mut global = Global::default();
        global
            .reservations
            .insert("b".into(), reservations.to_vec());
        global.agent_quotas.insert("b".into(), quota);
        global
    }

    #[test]
    fn the_window_is_a_rolling_hour() {
        let global = global_with(&[0, 1_000, 2_000], 3);
        let err = global.check_quota("b", 10_000).unwrap_err();
        assert_eq!(err.details["retry_after_ms"], QUOTA_WINDOW_MS - 10_000);
        // At exactly 60 minutes the oldest one has left the window.
        assert!(global.check_quota("b", QUOTA_WINDOW_MS).is_ok());
        assert!(global.check_quota("b", QUOTA_WINDOW_MS - 1).is_err());
    }

    #[test]
    fn default_quota_is_thirty() {
        let global = Global::default();
        assert_eq!(global.quota_of("anyone"), 30);
        let zero = global_with(&[], 0);
        assert_eq!(
            zero.check_quota("b", 0).unwrap_err().details["retry_after_ms"],
            serde_json::Value::Null
        );
    }
}
