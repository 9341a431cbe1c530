//! The ledger-wide state: fleets, wake quotas and the kill-switch.

use super::text::{printable, relative};
use super::{At, Sink, Style, View};
use crate::global::{DEFAULT_WAKES_PER_HOUR, Global};
use crate::spend::Usd;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeSet;

/// `fleet add|remove`: the fleet's members after the change.
#[derive(Serialize)]
pub(crate) struct FleetView {
    pub fleet_id: String,
    pub agents: Vec<String>,
}

impl View for FleetView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        if self.agents.is_empty() {
            out.text(&format!(
                "{}: no members (the fleet no longer exists)\n",
                self.fleet_id
            ));
        } else {
            out.text(&format!("{}: {}\n", self.fleet_id, self.agents.join(" ")));
        }
    }
}

/// `fleet list`: every fleet (or one) with its members.
#[derive(Serialize)]
pub(crate) struct FleetsView {
    pub fleets: Vec<FleetView>,
}

impl FleetsView {
    /// The fleets of `global`, or only `only`.
    pub(crate) fn of(global: &Global, only: Option<&str>) -> FleetsView {
        FleetsView {
            fleets: global
                .fleets
                .iter()
                .filter(|(id, _)| only.is_none_or(|o| o == id.as_str()))
                .map(|(id, members)| FleetView {
                    fleet_id: id.clone(),
                    agents: members.iter().cloned().collect(),
                })
                .collect(),
        }
    }
}

impl View for FleetsView {
    fn human(&self, style: &Style, out: &mut Sink) {
        if self.fleets.is_empty() {
            out.text("no fleets; add one with `discuss fleet add FLEET AGENT...`\n");
            return;
        }
        let mut table = style.table(&["fleet", "agents"]);
        for fleet in &self.fleets {
            table.add_row(vec![fleet.fleet_id.clone(), fleet.agents.join(" ")]);
        }
        out.text(&format!("{table}\n"));
    }
}

/// `quota show|set`: the default, and the agents with their own quota or
/// a wake in the last hour.
#[derive(Serialize)]
pub(crate) struct QuotaView {
    pub default_wakes_per_hour: u32,
    /// The default spend caps; null when never set (no cap).
    pub default_tokens_per_hour: Option<u64>,
    pub default_cost_usd_per_day: Option<Value>,
    pub agents: Vec<AgentQuota>,
}

#[derive(Serialize)]
pub(crate) struct AgentQuota {
    pub agent_id: String,
    pub wakes_per_hour: u32,
    pub own_quota: bool,
    pub wakes_last_hour: usize,
    /// The caps that apply to the agent (its own, else the default's).
    pub tokens_per_hour: Option<u64>,
    pub cost_usd_per_day: Option<Value>,
    pub tokens_last_hour: u64,
    pub cost_usd_last_day: Value,
}

impl QuotaView {
    pub(crate) fn of(global: &Global, now_ms: i64) -> QuotaView {
        let agents: BTreeSet<&String> = global
            .agent_quotas
            .keys()
            .chain(global.reservations.keys())
            .chain(global.token_caps.agents.keys())
            .chain(global.cost_caps.agents.keys())
            .chain(global.spent.keys())
            .collect();
        QuotaView {
            default_wakes_per_hour: global.default_quota.unwrap_or(DEFAULT_WAKES_PER_HOUR),
            default_tokens_per_hour: global.token_caps.default,
            default_cost_usd_per_day: global.cost_caps.default.map(Usd::to_json),
            agents: agents
                .into_iter()
                .map(|agent| {
                    let (tokens, cost) = global.spend_of(agent, now_ms);
                    let own = global.agent_quotas.contains_key(agent)
                        || global.token_caps.agents.contains_key(agent)
                        || global.cost_caps.agents.contains_key(agent);
                    AgentQuota {
                        agent_id: agent.clone(),
                        wakes_per_hour: global.quota_of(agent),
                        own_quota: own,
                        wakes_last_hour: global.wakes_in_window(agent, now_ms).len(),
                        tokens_per_hour: global.token_caps.of(agent),
                        cost_usd_per_day: global.cost_caps.of(agent).map(Usd::to_json),
                        tokens_last_hour: tokens,
                        cost_usd_last_day: cost.to_json(),
                    }
                })
                .filter(|quota| {
                    quota.wakes_last_hour > 0
                        || quota.own_quota
                        || quota.tokens_last_hour > 0
                        || quota.cost_usd_last_day != 0
                })
                .collect(),
        }
    }
}

impl View for QuotaView {
    fn human(&self, style: &Style, out: &mut Sink) {
        let mut table = style.table(&[
            "agent",
            "wakes per hour",
            "wakes in the last hour",
            "tokens: last hour / cap",
            "dollars: last day / cap",
        ]);
        let cap = |c: Option<String>| c.unwrap_or_else(|| "no cap".to_owned());
        table.add_row(vec![
            "(default)".to_owned(),
            self.default_wakes_per_hour.to_string(),
            String::new(),
            cap(self.default_tokens_per_hour.map(|t| t.to_string())),
            cap(self.default_cost_usd_per_day.as_ref().map(Value::to_string)),
        ]);
        for agent in &self.agents {
            table.add_row(vec![
                agent.agent_id.clone(),
                agent.wakes_per_hour.to_string(),
                agent.wakes_last_hour.to_string(),
                format!(
                    "{} / {}",
                    agent.tokens_last_hour,
                    cap(agent.tokens_per_hour.map(|t| t.to_string()))
                ),
                format!(
                    "{} / {}",
                    agent.cost_usd_last_day,
                    cap(agent.cost_usd_per_day.as_ref().map(Value::to_string))
                ),
            ]);
        }
        out.text(&format!("{table}\n"));
    }
}

/// `kill-switch`: whether it is engaged, why, since when and by whom.
#[derive(Serialize)]
pub(crate) struct KillSwitchView {
    pub engaged: bool,
    pub reason: Option<String>,
    pub changed_at: Option<At>,
    pub changed_by: Option<String>,
    /// Every engaged scoped switch.
    pub scopes: Vec<ScopedSwitchJson>,
}

/// One engaged scoped switch, as `kill-switch status --json` lists it.
#[derive(Serialize)]
pub(crate) struct ScopedSwitchJson {
    pub scope: serde_json::Value,
    pub reason: Option<String>,
    pub changed_at: Option<At>,
    pub changed_by: Option<String>,
}

impl From<&Global> for KillSwitchView {
    fn from(global: &Global) -> KillSwitchView {
        let state = &global.kill_switch;
        KillSwitchView {
            engaged: state.engaged,
            reason: state.reason.clone(),
            changed_at: state.changed_at_ms.map(At),
            changed_by: state.changed_by.clone(),
            scopes: global
                .scoped
                .iter()
                .map(|s| ScopedSwitchJson {
                    scope: s.scope.to_json(),
                    reason: s.state.reason.clone(),
                    changed_at: s.state.changed_at_ms.map(At),
                    changed_by: s.state.changed_by.clone(),
                })
                .collect(),
        }
    }
}

impl View for KillSwitchView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        let since = |at: Option<At>, by: Option<&str>| {
            format!(
                "since {} by {}",
                at.map(|at| crate::clock::format_ms(at.0))
                    .unwrap_or_default(),
                printable(by.unwrap_or(""), false)
            )
        };
        let mut text = if self.engaged {
            format!(
                "kill-switch ENGAGED: {} ({})\n",
                printable(self.reason.as_deref().unwrap_or(""), false),
                since(self.changed_at, self.changed_by.as_deref())
            )
        } else if self.scopes.is_empty() {
            "kill-switch off\n".to_owned()
        } else {
            // Said whole, so that "off" is not read as "nothing halted".
            let n = self.scopes.len();
            format!(
                "global kill-switch off; {n} scoped {} engaged:\n",
                if n == 1 { "switch" } else { "switches" }
            )
        };
        for scoped in &self.scopes {
            let scope = scoped
                .scope
                .as_object()
                .and_then(|o| o.iter().next())
                .map(|(kind, id)| format!("{kind} {}", id.as_str().unwrap_or("")))
                .unwrap_or_default();
            text.push_str(&format!(
                "  {} HALTED: {} ({})\n",
                printable(&scope, false),
                printable(scoped.reason.as_deref().unwrap_or(""), false),
                since(scoped.changed_at, scoped.changed_by.as_deref())
            ));
        }
        out.text(&text);
    }
}

/// `token issue`: the new token, shown this once, and what it acts as.
#[derive(Serialize)]
pub(crate) struct TokenIssuedView {
    pub token: String,
    pub token_id: String,
    pub agent_id: String,
    pub role: &'static str,
    pub expires_at: Option<At>,
}

impl View for TokenIssuedView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        // The token alone on stdout, so `$(discuss token issue …)` takes
        // it; what it is goes to the note below it.
        out.text(&format!("{}\n", self.token));
    }
}

impl TokenIssuedView {
    /// What the token is, for stderr: never the token.
    pub(crate) fn described(&self) -> String {
        format!(
            "{} acts as {} ({}){}; it is shown only now, and the ledger keeps only its digest",
            self.token_id,
            self.agent_id,
            self.role,
            self.expires_at
                .map(|at| format!(", until {}", crate::clock::format_ms(at.0)))
                .unwrap_or_default()
        )
    }
}

/// `token list` (and `token revoke`: the one revoked): never a token.
#[derive(Serialize)]
pub(crate) struct TokensView {
    pub tokens: Vec<TokenRow>,
    /// The instant the times are told from (not in the JSON).
    #[serde(skip)]
    pub now_ms: i64,
}

#[derive(Serialize)]
pub(crate) struct TokenRow {
    pub token_id: String,
    pub agent_id: String,
    pub role: &'static str,
    pub state: &'static str,
    pub issued_at: At,
    pub issued_by: String,
    pub expires_at: Option<At>,
    pub revoked_at: Option<At>,
}

impl TokensView {
    /// Every token of `global` (or only `only`), oldest first.
    pub(crate) fn of(global: &Global, now_ms: i64, only: Option<&str>) -> TokensView {
        let mut tokens: Vec<TokenRow> = global
            .credentials
            .iter()
            .filter(|(id, _)| only.is_none_or(|o| o == id.as_str()))
            .map(|(id, c)| TokenRow {
                token_id: id.clone(),
                agent_id: c.agent_id.clone(),
                role: c.role.as_str(),
                state: c.state(now_ms),
                issued_at: At(c.issued_at_ms),
                issued_by: c.issued_by.clone(),
                expires_at: c.expires_ms.map(At),
                revoked_at: c.revoked_at_ms.map(At),
            })
            .collect();
        tokens.sort_by(|a, b| (a.issued_at.0, &a.token_id).cmp(&(b.issued_at.0, &b.token_id)));
        TokensView { tokens, now_ms }
    }
}

impl View for TokensView {
    /// One block a token, not a table: its id stays whole at any width
    /// (it is what `token revoke` takes), and times read as `list`'s do.
    fn human(&self, _style: &Style, out: &mut Sink) {
        if self.tokens.is_empty() {
            out.text("no tokens; issue one with `discuss token issue AGENT`\n");
            return;
        }
        let now_ms = self.now_ms;
        let mut text = String::new();
        for token in &self.tokens {
            let ends = match (token.revoked_at, token.expires_at) {
                (Some(at), _) => format!("revoked {}", relative(at.0, now_ms)),
                (None, Some(at)) if at.0 <= now_ms => format!("expired {}", relative(at.0, now_ms)),
                (None, Some(at)) => format!("expires {}", relative(at.0, now_ms)),
                (None, None) => "never expires".to_owned(),
            };
            text.push_str(&format!(
                "{}  {}\n  {} ({}) · issued {} by {} · {ends}\n",
                token.token_id,
                token.state,
                printable(&token.agent_id, false),
                token.role,
                relative(token.issued_at.0, now_ms),
                printable(&token.issued_by, false),
            ));
        }
        out.text(&text);
    }
}
