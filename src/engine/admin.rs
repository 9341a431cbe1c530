//! Operator writes: fleet membership, the kill-switch, quotas.

use super::Stamp;
use crate::global::Global;
use crate::ids;
use crate::record::{Body, Record};
use crate::record::{FleetChange, FleetOp, KillSwitch, QuotaSetting};

/// Membership changes; idempotent: agents already in (or already out of)
/// the fleet get no record.
pub fn plan_fleet(
    global: &Global,
    op: FleetOp,
    fleet_id: &str,
    agents: &[String],
    stamp: &Stamp,
) -> Vec<Record> {
    let members = global.members(fleet_id);
    let mut seen = std::collections::BTreeSet::new();
    agents
        .iter()
        .filter(|agent| seen.insert(agent.as_str()))
        .filter(|agent| {
            let member = members.is_some_and(|m| m.contains(*agent));
            (op == FleetOp::Add) != member
        })
        .map(|agent| {
            stamp.record(
                ids::RECORD,
                Body::Fleet(FleetChange {
                    op,
                    fleet_id: fleet_id.into(),
                    agent_id: agent.clone(),
                }),
            )
        })
        .collect()
}

/// Every change is recorded, even to the same state: the ledger keeps who
/// engaged or released the switch, when, and why.
pub fn plan_kill_switch(
    engaged: bool,
    reason: Option<String>,
    scope: Option<crate::record::Scope>,
    stamp: &Stamp,
) -> Vec<Record> {
    vec![stamp.record(
        ids::RECORD,
        Body::KillSwitch(KillSwitch {
            engaged,
            reason,
            scope,
        }),
    )]
}

/// One record a quota set: the wake quota, the token cap, the cost cap.
pub fn plan_quota(agent_id: Option<String>, quotas: &Quotas, stamp: &Stamp) -> Vec<Record> {
    let settings = [
        QuotaSetting {
            wakes_per_hour: quotas.wakes_per_hour,
            ..QuotaSetting::default()
        },
        QuotaSetting {
            tokens_per_hour: quotas.tokens_per_hour,
            ..QuotaSetting::default()
        },
        QuotaSetting {
            cost_usd_per_day: quotas.cost_usd_per_day,
            ..QuotaSetting::default()
        },
    ];
    settings
        .into_iter()
        .filter(|s| *s != QuotaSetting::default())
        .map(|setting| {
            stamp.record(
                ids::RECORD,
                Body::Quota(QuotaSetting {
                    agent_id: agent_id.clone(),
                    ..setting
                }),
            )
        })
        .collect()
}

/// What `quota set` sets; at least one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Quotas {
    pub wakes_per_hour: Option<u32>,
    pub tokens_per_hour: Option<u64>,
    pub cost_usd_per_day: Option<crate::spend::Usd>,
}

/// A token's issue: only its digest is written.
pub fn plan_token_issue(
    token_id: &str,
    agent_id: &str,
    role: crate::record::Role,
    sha256: String,
    expires_ms: Option<i64>,
    stamp: &Stamp,
) -> Vec<Record> {
    vec![stamp.record(
        ids::RECORD,
        Body::Credential(crate::record::Credential {
            op: crate::record::CredentialOp::Issue,
            token_id: token_id.into(),
            agent_id: Some(agent_id.into()),
            role: Some(role),
            sha256: Some(sha256),
            expires_ms,
        }),
    )]
}

/// A token's revocation; none for one already revoked.
pub fn plan_token_revoke(global: &Global, token_id: &str, stamp: &Stamp) -> Vec<Record> {
    if global
        .credentials
        .get(token_id)
        .is_none_or(|c| c.revoked_at_ms.is_some())
    {
        return Vec::new();
    }
    vec![stamp.record(
        ids::RECORD,
        Body::Credential(crate::record::Credential {
            op: crate::record::CredentialOp::Revoke,
            token_id: token_id.into(),
            agent_id: None,
            role: None,
            sha256: None,
            expires_ms: None,
        }),
    )]
}
