//! The discussions of a ledger as rows (`list`, `inbox`, their `call` and
//! MCP tools, shell completion): from the live set, from the summary the
//! cache keeps, or derived; and what the cache keeps of a discussion.

use crate::discussion::{Discussion, Row, Status, derive, derive_lean};
use crate::error::{Error, ErrorCode, Result};
use crate::ids;
use crate::ledger::live::MAX_CONVERSATION_MS;
use crate::ledger::{LineCheck, Summary, Untrusted};
use crate::record::Record;
use crate::session::Session;

/// Parses `--status` values; `terminal` expands to every terminal status.
pub(crate) fn parse_statuses(values: &[String]) -> Result<Vec<Status>> {
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
pub(crate) fn derive_all<T>(
    session: &Session,
    mut f: impl FnMut(Discussion) -> Option<T>,
) -> Result<(Vec<T>, i64)> {
    let instant = Instant::new(session);
    let mapped = session.ledger.map_discussions(|last_at_ms, id, records| {
        derive(id, records, instant.at(last_at_ms)).and_then(&mut f)
    })?;
    Ok((mapped, instant.taken()))
}

/// The lines checked and, of every discussion, `Some` with the discussion
/// itself when it is invalid (`verify`), from one read of the ledger: a
/// status is folded without the contents, and only an invalid discussion
/// is derived whole.
pub(crate) fn check_and_find_invalid(
    session: &Session,
    checker: crate::ledger::LineChecker,
) -> Result<(LineCheck, Vec<Option<Box<Discussion>>>)> {
    let instant = Instant::new(session);
    let (lines, mapped) = session
        .ledger
        .check_and_map(checker, |last_at_ms, id, records| {
            let at = instant.at(last_at_ms);
            let reported = derive_lean(id, records, at)?.verify_reports();
            Some(
                reported
                    .then(|| derive(id, records, at).map(Box::new))
                    .flatten(),
            )
        })?;
    Ok((lines, mapped))
}

/// One instant for every discussion of a list, taken when the ledger is
/// read (under its lock, for a file).
struct Instant<'a> {
    session: &'a Session,
    at: std::cell::Cell<Option<i64>>,
}

impl<'a> Instant<'a> {
    fn new(session: &'a Session) -> Instant<'a> {
        Instant {
            session,
            at: std::cell::Cell::new(None),
        }
    }

    fn at(&self, last_at_ms: Option<i64>) -> i64 {
        let now = self
            .at
            .get()
            .unwrap_or_else(|| self.session.now(last_at_ms));
        self.at.set(Some(now));
        now
    }

    fn taken(&self) -> i64 {
        self.at.get().unwrap_or_else(|| self.session.now(None))
    }
}

/// The order of lists: the most recently updated first, then by id.
pub(crate) fn newest_first(a: (i64, &str), b: (i64, &str)) -> std::cmp::Ordering {
    b.cmp(&a)
}

/// What the ledger's cache keeps of a discussion for lists: its row as it
/// will be from the instant it is settled (past its conversation deadline
/// and its newest record, when the clock can no longer change it), and
/// that instant. Until then, and after any new line, readers derive it.
pub(crate) fn summarize(id: &str, records: &[&Record]) -> Summary {
    let newest = records.iter().map(|r| r.at_ms).max().unwrap_or(0);
    // Every deadline of a discussion is within its conversation deadline,
    // at most MAX_CONVERSATION_MS after its root, itself not after `newest`.
    let beyond = newest.saturating_add(MAX_CONVERSATION_MS + 1);
    let settled = derive_lean(id, records, beyond);
    let deadline = settled
        .as_ref()
        .and_then(|d| d.root.as_ref())
        .map_or(newest, |root| root.deadline_ms);
    let row = settled.as_ref().map(Row::of);
    Summary {
        settled_from_ms: newest.max(deadline).saturating_add(1),
        row: crate::output::summary_row_json(row.as_ref()),
    }
}

/// Every discussion in the ledger whose row `keep` keeps, newest first,
/// and the instant they were derived at. With `live_only`, for a `keep`
/// that keeps only open or active discussions, those are derived from the
/// live set alone; else (or when the live set cannot tell) rows come from
/// the ledger's summary, and only what it cannot answer is derived.
fn rows_of(
    session: &Session,
    live_only: bool,
    keep: impl Fn(&Row) -> bool,
) -> Result<(Vec<Row>, i64)> {
    let instant = Instant::new(session);
    let mut derived = |last_at_ms: Option<i64>, id: &str, records: &[&Record]| {
        derive_lean(id, records, instant.at(last_at_ms))
            .map(|d| Row::of(&d))
            .filter(&keep)
    };
    let live = if live_only {
        session
            .ledger
            .map_live(|last| instant.at(last), &mut derived)?
    } else {
        None
    };
    let mut rows = match live {
        Some(rows) => rows,
        None => session.ledger.map_summaries(
            |last| instant.at(last),
            |json| {
                let row = Row::from_summary(json).map_err(|_| Untrusted)?;
                Ok(row.filter(&keep))
            },
            &mut derived,
        )?,
    };
    // Ids are unique, so no two rows tie: the unstable sort's order is
    // the stable one's, without moving rows into and out of a buffer.
    rows.sort_unstable_by(|a, b| newest_first((a.updated_at_ms, &a.id), (b.updated_at_ms, &b.id)));
    Ok((rows, instant.taken()))
}

/// The rows of `list`: every discussion in one of `statuses` (any, when
/// none is given), of `agent` and in `fleet` when given.
pub(crate) fn listed(
    session: &Session,
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
    rows_of(session, live_only, |row| {
        (statuses.is_empty() || statuses.contains(&row.status))
            && agent.is_none_or(|a| row.participants.iter().any(|p| p == a))
            && fleet.is_none_or(|f| row.fleet_id.as_deref() == Some(f))
    })
}

/// The rows of `inbox`: discussions whose head is addressed to `agent`
/// and which are open (what it could be woken for) or active with its
/// live attempt (the turn it was woken for and must answer; a live
/// attempt is always the head recipient's).
pub(crate) fn inbox_rows(session: &Session, agent: &str) -> Result<(Vec<Row>, i64)> {
    ids::check_name("agent_id", agent)?;
    rows_of(session, true, |row| {
        let waiting = match row.status {
            Status::Open => true,
            Status::Active => row.live_attempt_id.is_some(),
            _ => false,
        };
        waiting && row.head_to_agent_id.as_deref() == Some(agent)
    })
}
