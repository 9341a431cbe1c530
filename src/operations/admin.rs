//! The operator's writes (fleet membership, the kill-switch, quotas), as
//! `fleet`, `kill-switch` and `quota` make them and `serve`'s operator
//! endpoints too. Each runs its engine plan as one global write.

use crate::discussion::envelope::check_range;
use crate::engine::{plan_fleet, plan_kill_switch, plan_quota};
use crate::error::{Error, ErrorCode, Result};
use crate::global::{Global, KillSwitchState};
use crate::ids;
use crate::record::{FleetOp, MAX_WAKES_PER_HOUR};
use crate::session::Session;

/// Adds `add` to `fleet` and removes `remove` from it, in one write; the
/// state after it.
pub(crate) fn change_fleet(
    session: &Session,
    fleet: &str,
    add: &[String],
    remove: &[String],
) -> Result<Global> {
    ids::check_name("fleet_id", fleet)?;
    for agent in add.iter().chain(remove) {
        ids::check_name("agent_id", agent)?;
    }
    session.ledger.append_global(|view| {
        let stamp = session.stamp(view.last_at_ms());
        let mut global = view.global(session.now(view.last_at_ms())).into_owned();
        let mut records = Vec::new();
        for (op, agents) in [(FleetOp::Add, add), (FleetOp::Remove, remove)] {
            let planned = plan_fleet(&global, op, fleet, agents, &stamp);
            planned.iter().for_each(|record| global.apply(record));
            records.extend(planned);
        }
        Ok((records, global))
    })
}

/// Engages (with a reason that is not blank) or releases the switch.
pub(crate) fn set_kill_switch(
    session: &Session,
    engaged: bool,
    reason: Option<String>,
) -> Result<KillSwitchState> {
    if engaged && reason.as_deref().is_none_or(|r| r.trim().is_empty()) {
        return Err(
            Error::new(ErrorCode::InvalidArgument, "--reason must not be empty")
                .hint("say why, e.g. --reason 'runaway loop'"),
        );
    }
    let reason = reason.filter(|_| engaged);
    session.ledger.append_global(|view| {
        let stamp = session.stamp(view.last_at_ms());
        let state = KillSwitchState {
            engaged,
            reason: reason.clone(),
            changed_at_ms: Some(stamp.at_ms),
            changed_by: Some(stamp.by.clone()),
        };
        Ok((plan_kill_switch(engaged, reason.clone(), &stamp), state))
    })
}

/// Sets the hourly wake quota of `agent`, or the default; the state after
/// it and its time.
pub(crate) fn set_quota(
    session: &Session,
    agent: Option<&str>,
    wakes_per_hour: i64,
) -> Result<(Global, i64)> {
    check_range(
        "wakes_per_hour",
        wakes_per_hour,
        (0, i64::from(MAX_WAKES_PER_HOUR)),
    )?;
    if let Some(agent) = agent {
        ids::check_name("agent_id", agent)?;
    }
    session.ledger.append_global(|view| {
        let stamp = session.stamp(view.last_at_ms());
        let records = plan_quota(agent.map(str::to_owned), wakes_per_hour as u32, &stamp);
        let mut global = view.global(stamp.at_ms).into_owned();
        records.iter().for_each(|record| global.apply(record));
        Ok((records, (global, stamp.at_ms)))
    })
}
