//! `discuss list` and `discuss inbox`: one row per discussion. Read-only.

use super::Context;
use crate::discussion::{Discussion, Status, derive};
use crate::error::{Error, ErrorCode, Result};
use crate::ids;
use crate::output::{Answer, Row, RowsView};
use clap::Args;

/// List discussions, newest first.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  discuss list --status open --status active\n  discuss list --agent agent-b --json | jq -r '.discussions[].discussion_id'"
)]
pub struct ListArgs {
    /// Only these statuses (repeatable or comma-separated; `terminal` for
    /// closed, deadman, expired, exhausted and invalid)
    #[arg(long = "status", value_name = "S", value_delimiter = ',')]
    pub statuses: Vec<String>,
    /// Only discussions this agent takes part in
    #[arg(long, value_name = "A", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
    pub agent: Option<String>,
    /// Only discussions of this fleet
    #[arg(long, value_name = "F", add = clap_complete::ArgValueCandidates::new(crate::complete::fleets))]
    pub fleet: Option<String>,
    #[command(flatten)]
    pub quiet: super::QuietArgs,
}

/// Discussions whose head is addressed to the agent and which are open:
/// what it could be woken for. Reading it wakes nothing and writes nothing.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  discuss inbox --agent agent-b")]
pub struct InboxArgs {
    /// The agent
    #[arg(long, value_name = "A", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
    pub agent: String,
    #[command(flatten)]
    pub quiet: super::QuietArgs,
}

/// Parses `--status` values; `terminal` expands to every terminal status.
pub fn parse_statuses(values: &[String]) -> Result<Vec<Status>> {
    let mut statuses = Vec::new();
    for value in values.iter().map(|v| v.trim()) {
        if value == "terminal" {
            statuses.extend(Status::ALL.into_iter().filter(|s| s.is_terminal()));
        } else {
            statuses.push(Status::parse(value).ok_or_else(|| {
                Error::new(ErrorCode::InvalidArgument, format!("unknown status {value:?}"))
                    .detail("value", value)
                    .hint("statuses: open, active, closed, deadman, expired, exhausted, invalid, terminal")
            })?);
        }
    }
    Ok(statuses)
}

/// Every discussion in the ledger, derived at one instant (now, never
/// before the newest record) and passed through `f`; and that instant.
pub fn derive_all<T>(
    ctx: &Context,
    f: impl FnMut(Discussion) -> Option<T>,
) -> Result<(Vec<T>, i64)> {
    derive_each(ctx, false, f)
}

/// `derive_all`, or with `live_only` only the discussions that may be open
/// or active (`Ledger::map_live`): for filters that keep nothing else.
fn derive_each<T>(
    ctx: &Context,
    live_only: bool,
    mut f: impl FnMut(Discussion) -> Option<T>,
) -> Result<(Vec<T>, i64)> {
    // One instant for all of them, taken when the ledger is locked.
    let at: std::cell::Cell<Option<i64>> = std::cell::Cell::new(None);
    let now = |last_at_ms: Option<i64>| {
        let now = at.get().unwrap_or_else(|| ctx.now(last_at_ms));
        at.set(Some(now));
        now
    };
    let mut derived = |last_at_ms: Option<i64>, id: &str, records: &[&crate::ledger::Record]| {
        derive(id, records, now(last_at_ms)).and_then(&mut f)
    };
    let live = if live_only {
        ctx.ledger.map_live(now, &mut derived)?
    } else {
        None
    };
    let mapped = match live {
        Some(mapped) => mapped,
        None => ctx.ledger.map_discussions(&mut derived)?,
    };
    Ok((mapped, at.get().unwrap_or_else(|| ctx.now(None))))
}

/// The order of lists: the most recently updated first, then by id.
pub fn newest_first(a: (i64, &str), b: (i64, &str)) -> std::cmp::Ordering {
    b.cmp(&a)
}

/// Every discussion in the ledger that `keep` keeps, newest first, and the
/// instant they were derived at.
pub fn discussions(ctx: &Context, keep: impl Fn(&Discussion) -> bool) -> Result<(Vec<Row>, i64)> {
    rows_of(ctx, false, keep)
}

/// `discussions`; with `live_only`, for a `keep` that keeps only open or
/// active discussions, derived from the live set alone.
fn rows_of(
    ctx: &Context,
    live_only: bool,
    keep: impl Fn(&Discussion) -> bool,
) -> Result<(Vec<Row>, i64)> {
    let (mut rows, now) = derive_each(ctx, live_only, |d| keep(&d).then(|| Row::of(&d)))?;
    rows.sort_by(|a, b| newest_first((a.updated_at_ms, &a.id), (b.updated_at_ms, &b.id)));
    Ok((rows, now))
}

pub fn run<'a>(ctx: &'a Context, args: &ListArgs) -> Result<Answer<'a>> {
    let statuses = parse_statuses(&args.statuses)?;
    let (rows, now_ms) = listed(ctx, &statuses, args.agent.as_deref(), args.fleet.as_deref())?;
    Ok(Answer::new(RowsView {
        rows,
        now_ms,
        empty: "no discussions".into(),
        ledger: &ctx.ledger,
    })
    .quiet(args.quiet.quiet))
}

/// The rows of `list`: every discussion in one of `statuses` (any, when
/// none is given), of `agent` and in `fleet` when given.
pub fn listed(
    ctx: &Context,
    statuses: &[Status],
    agent: Option<&str>,
    fleet: Option<&str>,
) -> Result<(Vec<Row>, i64)> {
    if let Some(agent) = agent {
        ids::check_name("agent_id", agent)?;
    }
    if let Some(fleet) = fleet {
        ids::check_name("fleet_id", fleet)?;
    }
    // Open and active discussions are few and recent, whatever the size of
    // the ledger: only those need deriving.
    let live_only = !statuses.is_empty()
        && statuses
            .iter()
            .all(|s| matches!(s, Status::Open | Status::Active));
    rows_of(ctx, live_only, |d| {
        (statuses.is_empty() || statuses.contains(&d.status))
            && agent.is_none_or(|a| d.root.as_ref().is_some_and(|r| r.asker == a || r.peer == a))
            && fleet.is_none_or(|f| d.root.as_ref().is_some_and(|r| r.fleet_id == f))
    })
}

pub fn inbox<'a>(ctx: &'a Context, args: &InboxArgs) -> Result<Answer<'a>> {
    let (rows, now_ms) = inbox_rows(ctx, &args.agent)?;
    Ok(Answer::new(RowsView {
        rows,
        now_ms,
        empty: format!("nothing waits for {}", args.agent),
        ledger: &ctx.ledger,
    })
    .quiet(args.quiet.quiet))
}

/// The rows of `inbox`: open discussions whose head is addressed to `agent`.
pub fn inbox_rows(ctx: &Context, agent: &str) -> Result<(Vec<Row>, i64)> {
    ids::check_name("agent_id", agent)?;
    rows_of(ctx, true, |d| {
        d.status == Status::Open && d.head().is_some_and(|h| h.to_agent_id == agent)
    })
}
