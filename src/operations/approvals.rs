//! Approval gates: set, clear and list them; grant or deny a request; the
//! requests that wait for a person.

use crate::discussion::{Approval, ApprovalState, Discussion};
use crate::engine::approval::{plan_decision, plan_gate, unknown};
use crate::error::{Error, ErrorCode, Result};
use crate::global::{GateRule, Global};
use crate::record::Scope;
use crate::session::Session;

/// A request and its discussion, as a reader at `now_ms` sees it.
#[derive(Debug, Clone)]
pub(crate) struct Decided {
    pub discussion: Discussion,
    pub approval: Approval,
    pub now_ms: i64,
}

/// Records a grant (`granted`) or a denial of `approval_id`. A denial
/// needs a reason. A kill-switch never blocks a decision.
pub(crate) fn decide(
    session: &Session,
    approval_id: &str,
    granted: bool,
    reason: Option<String>,
) -> Result<Decided> {
    let reason = reason.filter(|r| !r.trim().is_empty());
    if !granted && reason.is_none() {
        return Err(
            Error::new(ErrorCode::InvalidArgument, "a denial needs a --reason")
                .detail("field", "reason")
                .hint("say why, e.g. --reason 'too costly for a third turn'"),
        );
    }
    crate::ids::check_server_id("approval_id", crate::ids::RECEIPT, approval_id)?;
    if !session.ledger.exists()? {
        return Err(unknown(approval_id));
    }
    let view = session.ledger.view(&[])?;
    let global = view.global(session.now(view.last_at_ms()));
    let discussion_id = global
        .approval_place(approval_id)
        .map(|p| p.discussion_id.clone())
        .ok_or_else(|| unknown(approval_id))?;
    drop(global);
    drop(view);
    let (_, discussion) = session.ledger.append(&[&discussion_id], |view| {
        let stamp = session.stamp(view.last_at_ms());
        let (records, discussion) = plan_decision(
            &discussion_id,
            &view.discussion(&discussion_id),
            approval_id,
            granted,
            reason.clone(),
            &stamp,
        )?;
        Ok((records, ((), discussion)))
    })?;
    let now_ms = session.now(Some(discussion.updated_at_ms));
    let approval = discussion
        .approvals
        .iter()
        .find(|a| a.approval_id == approval_id)
        .cloned()
        .ok_or_else(|| unknown(approval_id))?;
    Ok(Decided {
        discussion,
        approval,
        now_ms,
    })
}

/// The requests in `state` (all of them with `None`), oldest first.
pub(crate) fn requests(session: &Session, state: Option<ApprovalState>) -> Result<Vec<Decided>> {
    if !session.ledger.exists()? {
        return Ok(Vec::new());
    }
    let view = session.ledger.view(&[])?;
    let global = view.global(session.now(view.last_at_ms()));
    // Only an undecided request can be pending; any may be asked for.
    let places: Vec<(String, String)> = global
        .approvals
        .iter()
        .filter(|(_, place)| state != Some(ApprovalState::Pending) || !place.decided)
        .map(|(id, place)| (id.clone(), place.discussion_id.clone()))
        .collect();
    drop(global);
    drop(view);
    let mut found = Vec::new();
    let mut discussions: Vec<(String, Discussion, i64)> = Vec::new();
    for (approval_id, discussion_id) in places {
        if !discussions.iter().any(|(id, _, _)| *id == discussion_id) {
            let (discussion, now) = super::read::load(session, &discussion_id)?;
            discussions.push((discussion_id.clone(), discussion, now));
        }
        let Some((_, discussion, now)) = discussions.iter().find(|(id, _, _)| *id == discussion_id)
        else {
            continue;
        };
        let Some(approval) = discussion
            .approvals
            .iter()
            .find(|a| a.approval_id == approval_id)
        else {
            continue;
        };
        let pending = approval.pending_at(*now)
            && !discussion.status.is_terminal()
            && discussion.head().map(|h| &h.message_id) == Some(&approval.head_message_id);
        let matches = match state {
            None => true,
            Some(ApprovalState::Pending) => pending,
            Some(wanted) => approval.state(*now) == wanted,
        };
        if matches {
            found.push(Decided {
                discussion: discussion.clone(),
                approval: approval.clone(),
                now_ms: *now,
            });
        }
    }
    Ok(found)
}

/// What `gate set` takes, as given: checked and typed by `set_gate`.
#[derive(Debug, Clone, Default)]
pub(crate) struct GateConditions {
    pub always: bool,
    pub from_turn: Option<i64>,
    pub over_cost_usd: Option<String>,
    pub over_tokens: Option<i64>,
    pub approval_timeout_ms: Option<i64>,
}

/// Sets the gate of `scope` (`None`: every wake), or with `None` for
/// `conditions` clears it. Answers the ledger-wide state after it.
pub(crate) fn set_gate(
    session: &Session,
    scope: Option<Scope>,
    conditions: Option<GateConditions>,
) -> Result<Global> {
    match &scope {
        Some(Scope::Fleet(fleet)) => crate::ids::check_name("fleet_id", fleet)?,
        Some(Scope::Agent(agent)) => crate::ids::check_name("agent_id", agent)?,
        Some(Scope::Discussion(_)) => {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "a gate covers every wake, a fleet's or an agent's",
            )
            .hint("--fleet F or --agent A"));
        }
        None => {}
    }
    let rule = conditions.map(|c| rule_of(&c, scope.clone())).transpose()?;
    session.ledger.append_global(|view| {
        let stamp = session.stamp(view.last_at_ms());
        let mut global = view.global(stamp.at_ms).into_owned();
        let rule = rule.clone().map(|rule| GateRule {
            set_at_ms: stamp.at_ms,
            set_by: stamp.by.clone(),
            ..rule
        });
        let records = plan_gate(scope.clone(), rule.as_ref(), &stamp);
        records.iter().for_each(|record| global.apply(record));
        Ok((records, global))
    })
}

/// The rule `c` gives, in the contract's ranges: `--from-turn` 2..32,
/// `--over-cost-usd` > 0, `--over-tokens` ≥ 1, `--approval-timeout-ms`
/// 1,000..86,400,000, and one condition at least. When and by whom it
/// is set are the writer's.
fn rule_of(c: &GateConditions, scope: Option<Scope>) -> Result<GateRule> {
    let out_of_range = |field: &str, range: &str| {
        Error::new(ErrorCode::OutOfRange, format!("--{field} must be {range}"))
            .detail("field", field.replace('-', "_"))
    };
    if !c.always && c.from_turn.is_none() && c.over_cost_usd.is_none() && c.over_tokens.is_none() {
        return Err(Error::new(
            ErrorCode::Usage,
            "a gate needs a condition: --always, --from-turn N, --over-cost-usd X or --over-tokens N",
        )
        .hint("discuss gate set --agent agent-b --from-turn 3"));
    }
    let from_turn = c
        .from_turn
        .map(|t| {
            u32::try_from(t)
                .ok()
                .filter(|t| (2..=32).contains(t))
                .ok_or_else(|| out_of_range("from-turn", "from 2 to 32"))
        })
        .transpose()?;
    let over_cost_usd = c
        .over_cost_usd
        .as_deref()
        .map(|x| {
            crate::spend::Usd::parse_decimal(x)
                .filter(|x| *x > crate::spend::Usd::ZERO)
                .ok_or_else(|| out_of_range("over-cost-usd", "a number of dollars above 0"))
        })
        .transpose()?;
    let over_tokens = c
        .over_tokens
        .map(|t| {
            u64::try_from(t)
                .ok()
                .filter(|t| *t >= 1)
                .ok_or_else(|| out_of_range("over-tokens", "1 or more"))
        })
        .transpose()?;
    let approval_timeout_ms = match c.approval_timeout_ms {
        Some(ms) if !(1_000..=86_400_000).contains(&ms) => {
            return Err(out_of_range("approval-timeout-ms", "from 1000 to 86400000"));
        }
        Some(ms) => ms,
        None => crate::global::DEFAULT_APPROVAL_TIMEOUT_MS,
    };
    Ok(GateRule {
        scope,
        always: c.always,
        from_turn,
        over_cost_usd,
        over_tokens,
        approval_timeout_ms,
        set_at_ms: 0,
        set_by: String::new(),
    })
}

/// `pending`, `granted`, `denied`, `expired`, or `all` (`None`): the
/// states a list of requests is asked for.
pub(crate) fn parse_state(state: &str) -> Result<Option<ApprovalState>> {
    Ok(Some(match state {
        "pending" => ApprovalState::Pending,
        "granted" => ApprovalState::Granted,
        "denied" => ApprovalState::Denied,
        "expired" => ApprovalState::Expired,
        "all" => return Ok(None),
        other => {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("no approval state {other:?}"),
            )
            .detail("field", "state")
            .hint("pending, granted, denied, expired or all"));
        }
    }))
}
