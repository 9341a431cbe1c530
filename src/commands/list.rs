//! `discuss list` and `discuss inbox`: one row per discussion. Read-only.

use super::Context;
use crate::discussion::{Discussion, Status, derive};
use crate::error::{Error, ErrorCode, Result};
use crate::ids;
use crate::ledger::cache::live::MAX_CONVERSATION_MS;
use crate::ledger::{Record, Summary, Untrusted};
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
/// (A full replay: `verify`'s.)
pub fn derive_all<T>(
    ctx: &Context,
    mut f: impl FnMut(Discussion) -> Option<T>,
) -> Result<(Vec<T>, i64)> {
    let instant = Instant::new(ctx);
    let mapped = ctx.ledger.map_discussions(|last_at_ms, id, records| {
        derive(id, records, instant.at(last_at_ms)).and_then(&mut f)
    })?;
    Ok((mapped, instant.taken()))
}

/// One instant for every discussion of a list, taken when the ledger is
/// read (under its lock, for a file).
struct Instant<'a> {
    ctx: &'a Context,
    at: std::cell::Cell<Option<i64>>,
}

impl<'a> Instant<'a> {
    fn new(ctx: &'a Context) -> Instant<'a> {
        Instant {
            ctx,
            at: std::cell::Cell::new(None),
        }
    }

    fn at(&self, last_at_ms: Option<i64>) -> i64 {
        let now = self.at.get().unwrap_or_else(|| self.ctx.now(last_at_ms));
        self.at.set(Some(now));
        now
    }

    fn taken(&self) -> i64 {
        self.at.get().unwrap_or_else(|| self.ctx.now(None))
    }
}

/// The order of lists: the most recently updated first, then by id.
pub fn newest_first(a: (i64, &str), b: (i64, &str)) -> std::cmp::Ordering {
    b.cmp(&a)
}

/// What the ledger's cache keeps of a discussion for lists: its row as it
/// will be from the instant it is settled (past its conversation deadline
/// and its newest record, when the clock can no longer change it), and
/// that instant. Until then, and after any new line, readers derive it.
pub fn summarize(id: &str, records: &[&Record]) -> Summary {
    let newest = records.iter().map(|r| r.at_ms).max().unwrap_or(0);
    // Every deadline of a discussion is within its conversation deadline,
    // at most MAX_CONVERSATION_MS after its root, itself not after `newest`.
    let beyond = newest.saturating_add(MAX_CONVERSATION_MS + 1);
    let settled = derive(id, records, beyond);
    let deadline = settled
        .as_ref()
        .and_then(|d| d.root.as_ref())
        .map_or(newest, |root| root.deadline_ms);
    let row = settled.as_ref().map(Row::of);
    Summary {
        settled_from_ms: newest.max(deadline).saturating_add(1),
        // Rows are strings and numbers: nothing that fails to serialize.
        row: serde_json::to_string(&row).unwrap_or_else(|_| "null".into()),
    }
}

/// Every discussion in the ledger whose row `keep` keeps, newest first,
/// and the instant they were derived at. With `live_only`, for a `keep`
/// that keeps only open or active discussions, those are derived from the
/// live set alone; else (or when the live set cannot tell) rows come from
/// the ledger's summary, and only what it cannot answer is derived.
fn rows_of(ctx: &Context, live_only: bool, keep: impl Fn(&Row) -> bool) -> Result<(Vec<Row>, i64)> {
    let instant = Instant::new(ctx);
    let mut derived = |last_at_ms: Option<i64>, id: &str, records: &[&Record]| {
        derive(id, records, instant.at(last_at_ms))
            .map(|d| Row::of(&d))
            .filter(&keep)
    };
    let live = if live_only {
        ctx.ledger.map_live(|last| instant.at(last), &mut derived)?
    } else {
        None
    };
    let mut rows = match live {
        Some(rows) => rows,
        None => ctx.ledger.map_summaries(
            |last| instant.at(last),
            |json| {
                let row: Option<Row> = serde_json::from_str(json).map_err(|_| Untrusted)?;
                Ok(row.filter(&keep))
            },
            &mut derived,
        )?,
    };
    rows.sort_by(|a, b| newest_first((a.updated_at_ms, &a.id), (b.updated_at_ms, &b.id)));
    Ok((rows, instant.taken()))
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
    rows_of(ctx, live_only, |row| {
        (statuses.is_empty() || statuses.contains(&row.status))
            && agent.is_none_or(|a| row.participants.iter().any(|p| p == a))
            && fleet.is_none_or(|f| row.fleet_id.as_deref() == Some(f))
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
    rows_of(ctx, true, |row| {
        row.status == Status::Open && row.head_to_agent_id.as_deref() == Some(agent)
    })
}
