//! The ledger-wide state: fleets, wake quotas and the kill-switch.

use super::text::printable;
use super::{At, Sink, Style, View};
use crate::global::{DEFAULT_WAKES_PER_HOUR, Global, KillSwitchState};
use serde::Serialize;
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
    pub agents: Vec<AgentQuota>,
}

#[derive(Serialize)]
pub(crate) struct AgentQuota {
    pub agent_id: String,
    pub wakes_per_hour: u32,
    pub own_quota: bool,
    pub wakes_last_hour: usize,
}

impl QuotaView {
    pub(crate) fn of(global: &Global, now_ms: i64) -> QuotaView {
        let agents: BTreeSet<&String> = global
            .agent_quotas
            .keys()
            .chain(global.reservations.keys())
            .collect();
        QuotaView {
            default_wakes_per_hour: global.default_quota.unwrap_or(DEFAULT_WAKES_PER_HOUR),
            agents: agents
                .into_iter()
                .map(|agent| AgentQuota {
                    agent_id: agent.clone(),
                    wakes_per_hour: global.quota_of(agent),
                    own_quota: global.agent_quotas.contains_key(agent),
                    wakes_last_hour: global.wakes_in_window(agent, now_ms).len(),
                })
                .filter(|quota| quota.wakes_last_hour > 0 || quota.own_quota)
                .collect(),
        }
    }
}

impl View for QuotaView {
    fn human(&self, style: &Style, out: &mut Sink) {
        let mut table = style.table(&["agent", "wakes per hour", "wakes in the last hour"]);
        table.add_row(vec![
            "(default)".to_owned(),
            self.default_wakes_per_hour.to_string(),
            String::new(),
        ]);
        for agent in &self.agents {
            table.add_row(vec![
                agent.agent_id.clone(),
                agent.wakes_per_hour.to_string(),
                agent.wakes_last_hour.to_string(),
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
}

impl From<KillSwitchState> for KillSwitchView {
    fn from(state: KillSwitchState) -> KillSwitchView {
        KillSwitchView {
            engaged: state.engaged,
            reason: state.reason,
            changed_at: state.changed_at_ms.map(At),
            changed_by: state.changed_by,
        }
    }
}

impl View for KillSwitchView {
    fn human(&self, _style: &Style, out: &mut Sink) {
        if !self.engaged {
            out.text("kill-switch off\n");
            return;
        }
        out.text(&format!(
            "kill-switch ENGAGED: {} (since {} by {})\n",
            printable(self.reason.as_deref().unwrap_or(""), false),
            self.changed_at
                .map(|at| crate::clock::format_ms(at.0))
                .unwrap_or_default(),
            printable(self.changed_by.as_deref().unwrap_or(""), false)
        ));
    }
}
