//! The operator's writes (fleet membership, the kill-switch, quotas), as
//! `fleet`, `kill-switch` and `quota` make them and `serve`'s operator
//! endpoints too. Each runs its engine plan as one global write.

use crate::discussion::Status;
use crate::discussion::envelope::check_range;
use crate::engine::{Quotas, plan_fleet, plan_kill_switch, plan_quota};
use crate::error::{Error, ErrorCode, Result};
use crate::global::Global;
use crate::ids;
use crate::record::Scope;
use crate::record::{FleetOp, MAX_WAKES_PER_HOUR};
use crate::session::Session;
use crate::spend;

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
    scope: Option<Scope>,
) -> Result<crate::global::Global> {
    if engaged && reason.as_deref().is_none_or(|r| r.trim().is_empty()) {
        return Err(
            Error::new(ErrorCode::InvalidArgument, "--reason must not be empty")
                .hint("say why, e.g. --reason 'runaway loop'"),
        );
    }
    let scope = match scope {
        Some(Scope::Fleet(fleet)) => {
            crate::ids::check_name("fleet_id", &fleet)?;
            let scope = Scope::Fleet(fleet);
            if engaged {
                reaches_something(session, &scope)?;
            }
            Some(scope)
        }
        Some(Scope::Agent(agent)) => {
            crate::ids::check_name("agent_id", &agent)?;
            let scope = Scope::Agent(agent);
            if engaged {
                reaches_something(session, &scope)?;
            }
            Some(scope)
        }
        // A discussion is written whole: a prefix names it now, the
        // record must name it for good.
        Some(Scope::Discussion(given)) => {
            // It must name a discussion there is: a switch of a mistyped
            // id would halt nothing and look engaged.
            let (discussion, _) = super::read::load(session, &given)?;
            // Nor would one of a discussion that has ended.
            if engaged && discussion.status.is_terminal() {
                let status = discussion.status.as_str();
                return Err(Error::new(
                    ErrorCode::DiscussionTerminal,
                    format!(
                        "{} is {status}: nothing in it can move, so nothing to halt",
                        discussion.id
                    ),
                )
                .detail("discussion_id", discussion.id.as_str())
                .detail("status", status));
            }
            Some(Scope::Discussion(discussion.id))
        }
        None => None,
    };
    let reason = reason.filter(|_| engaged);
    session.ledger.append_global(|view| {
        let stamp = session.stamp(view.last_at_ms());
        let mut global = view.global(stamp.at_ms).into_owned();
        let records = plan_kill_switch(engaged, reason.clone(), scope.clone(), &stamp);
        records.iter().for_each(|record| global.apply(record));
        Ok((records, global))
    })
}

/// A switch (or an agent's quota) must cover something that can move:
/// one of a mistyped name would halt or cap nothing and still look set. A
/// fleet there is (asks in it), an agent in a fleet, or a discussion of
/// theirs that is open or active (a fleet emptied since, an agent removed
/// since, still have those) is enough. Releasing is never refused.
fn reaches_something(session: &Session, scope: &Scope) -> Result<()> {
    let (fleet, agent, refusal) = match scope {
        Scope::Fleet(fleet) => (
            Some(fleet.as_str()),
            None,
            Error::new(
                ErrorCode::UnknownFleet,
                format!("no fleet {fleet}, and no discussion of it that can still move"),
            )
            .detail("fleet_id", fleet.as_str()),
        ),
        Scope::Agent(agent) => (
            None,
            Some(agent.as_str()),
            Error::new(
                ErrorCode::NotInFleet,
                format!("{agent} is in no fleet and in no discussion that can still move"),
            )
            .detail("agent_id", agent.as_str()),
        ),
        Scope::Discussion(_) => return Ok(()),
    };
    if session.ledger.exists()? {
        let view = session.ledger.view(&[])?;
        let global = view.global(session.now(view.last_at_ms()));
        let registered = global.fleets.iter().any(|(id, members)| {
            fleet.is_some_and(|f| f == id) || agent.is_some_and(|a| members.contains(a))
        });
        let live = || super::lists::listed(session, &[Status::Open, Status::Active], agent, fleet);
        if registered || !live()?.0.is_empty() {
            return Ok(());
        }
    }
    Err(refusal.hint("check the name: `discuss fleet list` shows the fleets and their agents"))
}

/// What `quota set` asks for, as given: each is checked here.
#[derive(Debug, Default)]
pub(crate) struct QuotaRequest<'a> {
    pub wakes_per_hour: Option<i64>,
    pub tokens_per_hour: Option<&'a serde_json::Value>,
    /// Text from a command line, a JSON number from a request.
    pub cost_usd_per_day: Option<&'a serde_json::Value>,
    /// Set for an agent in no fleet and no live discussion (yet).
    pub allow_unknown_agent: bool,
}

/// Sets the hourly wake quota and the spend caps of `agent`, or the
/// default's, in one write; the state after it and its time.
pub(crate) fn set_quota(
    session: &Session,
    agent: Option<&str>,
    request: &QuotaRequest<'_>,
) -> Result<(Global, i64)> {
    if let Some(wakes) = request.wakes_per_hour {
        check_range("wakes_per_hour", wakes, (0, i64::from(MAX_WAKES_PER_HOUR)))?;
    }
    let quotas = Quotas {
        wakes_per_hour: request.wakes_per_hour.map(|w| w as u32),
        tokens_per_hour: request
            .tokens_per_hour
            .map(|v| spend::check_tokens("tokens_per_hour", v, 0))
            .transpose()?,
        cost_usd_per_day: request
            .cost_usd_per_day
            .map(|v| spend::check_usd("cost_usd_per_day", v, false))
            .transpose()?,
    };
    if quotas == Quotas::default() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "quota set needs a wake quota, --tokens-per-hour or --cost-usd-per-day",
        )
        .hint("e.g. discuss quota set 10 --agent agent-b, or discuss quota set --tokens-per-hour 200000"));
    }
    if let Some(agent) = agent {
        ids::check_name("agent_id", agent)?;
        // A typo must not leave the agent meant without its cap.
        if !request.allow_unknown_agent {
            reaches_something(session, &Scope::Agent(agent.to_owned())).map_err(|e| {
                e.hint_each(
                    "to set it before the agent joins a fleet, give --allow-unknown-agent",
                    "to set it before the agent joins a fleet, send \"allow_unknown_agent\": true",
                )
            })?;
        }
    }
    session.ledger.append_global(|view| {
        let stamp = session.stamp(view.last_at_ms());
        let records = plan_quota(agent.map(str::to_owned), &quotas, &stamp);
        let mut global = view.global(stamp.at_ms).into_owned();
        records.iter().for_each(|record| global.apply(record));
        Ok((records, (global, stamp.at_ms)))
    })
}

/// Revokes the token `token_id` (`token revoke`, the console); the state
/// after it and its time.
pub(crate) fn revoke_token(session: &Session, token_id: &str) -> Result<(Global, i64, String)> {
    check_token_id(token_id)?;
    session.ledger.append_global(|view| {
        let stamp = session.stamp(view.last_at_ms());
        let mut global = view.global(stamp.at_ms).into_owned();
        let token_id = whole_token_id(&global, token_id)?;
        let records = crate::engine::plan_token_revoke(&global, &token_id, &stamp);
        records.iter().for_each(|record| global.apply(record));
        Ok((records, (global, stamp.at_ms, token_id)))
    })
}

/// The whole id of the token `given` names: itself, or the one token whose
/// id it begins (four characters after `tok_` at least, as other ids);
/// the record always names the whole id.
fn whole_token_id(global: &Global, given: &str) -> Result<String> {
    if global.credentials.contains_key(given) {
        return Ok(given.to_owned());
    }
    let long_enough = given.len() >= crate::credentials::TOKEN_ID.len() + 4;
    let matches: Vec<&String> = global
        .credentials
        .keys()
        .filter(|id| long_enough && id.starts_with(given))
        .collect();
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(Error::new(
            ErrorCode::UnknownToken,
            format!("no token has the id {given}, nor an id that begins so"),
        )
        .detail("token_id", given)
        .hint("discuss token list shows every token's id: give it whole, or a unique start of it (tok_ and four characters at least)")),
        many => Err(Error::new(
            ErrorCode::AmbiguousId,
            format!("{given} is the start of {} token ids", many.len()),
        )
        .detail("prefix", given)
        .detail(
            "candidates",
            many.iter().take(10).map(|id| id.as_str()).collect::<Vec<_>>(),
        )
        .hint("give more of the id")),
    }
}

/// A token id, refused without ever echoing what was given when it is not
/// one: a token pasted in its place (`dsk_…`) must not reach a terminal,
/// a log or a CI transcript.
fn check_token_id(token_id: &str) -> Result<()> {
    if token_id.starts_with(crate::credentials::TOKEN_ID) {
        return crate::ids::check_server_id("token_id", crate::credentials::TOKEN_ID, token_id);
    }
    let what = if token_id.starts_with(crate::credentials::TOKEN_PREFIX) {
        "that is a token itself, not its id (the token is not repeated here)"
    } else {
        "that is not a token id (tok_…; the value is not repeated here)"
    };
    Err(
        Error::new(ErrorCode::InvalidId, format!("token_id: {what}"))
            .detail("field", "token_id")
            .hint("discuss token list shows every token's id (tok_…); revoke takes that"),
    )
}
