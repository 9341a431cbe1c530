//! `discuss list` and `discuss inbox`: one row per discussion. Read-only.

use super::Context;
use crate::clock::format_ms;
use crate::discussion::{Discussion, Status, derive};
use crate::error::{Error, ErrorCode, Result};
use crate::ids;
use clap::Args;
use serde_json::{Value, json};

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
    #[arg(long, value_name = "A")]
    pub agent: Option<String>,
    /// Only discussions of this fleet
    #[arg(long, value_name = "F")]
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
    #[arg(long, value_name = "A")]
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

/// One line of `list`: what it shows of a discussion, kept small so a
/// ledger of any size lists in little memory.
#[derive(Debug, Clone)]
pub struct Row {
    pub id: String,
    pub root: Option<(String, String, String)>, // fleet, asker, peer
    pub status: Status,
    pub escalated: bool,
    pub turns_used: u32,
    pub max_turns: u32,
    pub head_id: Option<String>,
    pub head_to: Option<String>,
    pub updated_at_ms: i64,
}

impl Row {
    pub fn of(d: &Discussion) -> Row {
        Row {
            id: d.id.clone(),
            root: d
                .root
                .as_ref()
                .map(|r| (r.fleet_id.clone(), r.asker.clone(), r.peer.clone())),
            status: d.status,
            escalated: d.escalation.is_some(),
            turns_used: d.turns_used,
            max_turns: d.max_turns(),
            head_id: d.head().map(|h| h.message_id.clone()),
            head_to: d.head().map(|h| h.to_agent_id.clone()),
            updated_at_ms: d.updated_at_ms,
        }
    }
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

pub fn row_json(d: &Row) -> Value {
    json!({
        "discussion_id": d.id,
        "fleet_id": d.root.as_ref().map(|r| r.0.clone()),
        "participants": d.root.as_ref().map_or_else(Vec::new, |r| vec![r.1.clone(), r.2.clone()]),
        "status": d.status.as_str(),
        "turns_used": d.turns_used,
        "max_turns": d.max_turns,
        "head_message_id": d.head_id,
        "head_to_agent_id": d.head_to,
        "updated_at": format_ms(d.updated_at_ms),
        "escalated": d.escalated,
    })
}

fn render(ctx: &Context, rows: &[Row], now: i64, empty: &str, quiet: bool) {
    if quiet {
        // One id a line, for `xargs` and `while read`.
        let ids: String = rows.iter().map(|r| format!("{}\n", r.id)).collect();
        ctx.out.print_text(&ids);
        return;
    }
    if ctx.out.json {
        // The same bytes as one serialized object, without building it.
        let mut text = String::from("{\"discussions\":[");
        for (i, row) in rows.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&row_json(row).to_string());
            if text.len() > 1 << 20 {
                ctx.out.print_text(&text);
                text.clear();
            }
        }
        text.push_str("]}\n");
        ctx.out.print_text(&text);
        return;
    }
    if rows.is_empty() {
        // A ledger that is not there is said so, with where it was looked
        // for: an empty answer from the wrong path misleads.
        if ctx.ledger.exists() {
            ctx.out.print_text(&format!("{empty}\n"));
        } else {
            ctx.out.print_text(&format!(
                "{empty}: there is no ledger at {} yet\n",
                ctx.ledger.location()
            ));
        }
        return;
    }
    render_plain(ctx, rows, now);
}

const HEADERS: [&str; 6] = [
    "discussion",
    "status",
    "participants",
    "turns",
    "next",
    "updated",
];

/// A row's cells, uncoloured.
fn cells(d: &Row, now: i64) -> [String; 6] {
    let status = if d.escalated {
        format!("{} (escalated)", d.status.as_str())
    } else {
        d.status.as_str().to_owned()
    };
    [
        d.id.clone(),
        status,
        d.root
            .as_ref()
            .map_or(String::new(), |r| format!("{} ⇄ {}", r.1, r.2)),
        format!("{}/{}", d.turns_used, d.max_turns),
        // Nobody is next in a finished discussion.
        if d.status.is_terminal() {
            String::new()
        } else {
            d.head_to.clone().unwrap_or_default()
        },
        crate::output::relative(d.updated_at_ms, now),
    ]
}

/// Aligned columns, one line a row. Colour is put on after the padding, so
/// it never changes the layout. On a terminal narrower than the lines, ids
/// are shortened to the shortest prefix unique among the rows (commands
/// take a unique prefix), then columns are left out from the right; in a
/// pipe or a file nothing is cut.
fn render_plain(ctx: &Context, rows: &[Row], now: i64) {
    let all: Vec<[String; 6]> = rows.iter().map(|row| cells(row, now)).collect();
    let width_of = |column: usize, cells: &[[String; 6]]| {
        cells
            .iter()
            .map(|c| c[column].chars().count())
            .chain([HEADERS[column].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let mut shown: Vec<[String; 6]> = all;
    let mut columns = 6;
    let line_width = |shown: &[[String; 6]], columns: usize| {
        (0..columns).map(|c| width_of(c, shown) + 2).sum::<usize>() - 2
    };
    if let Some(limit) = crate::output::terminal_width() {
        if line_width(&shown, columns) > limit {
            // Unique among every discussion of the ledger, not only the
            // rows shown: the prefix must name its discussion when pasted.
            let all = ctx.ledger.discussion_ids().unwrap_or_default();
            let keep = unique_prefix_length(&all, rows.iter().map(|r| r.id.as_str()));
            for (cells, row) in shown.iter_mut().zip(rows) {
                cells[0] = row.id.chars().take(keep).collect();
            }
        }
        while columns > 2 && line_width(&shown, columns) > limit {
            columns -= 1;
        }
    }
    let widths: Vec<usize> = (0..columns).map(|c| width_of(c, &shown)).collect();
    let line = |cells: &[String; 6], status: Option<Status>| {
        let mut text = String::new();
        for (i, (cell, width)) in cells.iter().zip(&widths).enumerate() {
            match (i, status) {
                (1, Some(status)) => {
                    text.push_str(&cell.replacen(status.as_str(), &ctx.out.status(status), 1))
                }
                _ => text.push_str(cell),
            }
            if i + 1 < widths.len() {
                text.push_str(&" ".repeat(width - cell.chars().count() + 2));
            }
        }
        text.push('\n');
        text
    };
    let mut text = line(&HEADERS.map(str::to_owned), None);
    for (cells, row) in shown.iter().zip(rows) {
        text.push_str(&line(cells, Some(row.status)));
        if text.len() > 1 << 20 {
            ctx.out.print_text(&text);
            text.clear();
        }
    }
    ctx.out.print_text(&text);
}

/// How many characters of each of `ids` tell it apart from every other id
/// of `all` (sorted): at least `dsc_` and eight more, the shortest prefix a
/// command resolves.
fn unique_prefix_length<'a>(all: &[String], ids: impl Iterator<Item = &'a str>) -> usize {
    let shared = |a: &str, b: &str| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    ids.map(|id| {
        let at = all.partition_point(|other| other.as_str() < id);
        let before = at.checked_sub(1).map(|i| all[i].as_str());
        let after = all[at..]
            .iter()
            .map(String::as_str)
            .find(|other| *other != id);
        [before, after]
            .into_iter()
            .flatten()
            .map(|other| shared(id, other) + 1)
            .max()
            .unwrap_or(0)
    })
    .max()
    .unwrap_or(0)
    .max(12)
}

pub fn run(ctx: &Context, args: &ListArgs) -> Result<u8> {
    let statuses = parse_statuses(&args.statuses)?;
    let (rows, now) = listed(ctx, &statuses, args.agent.as_deref(), args.fleet.as_deref())?;
    render(ctx, &rows, now, "no discussions", args.quiet.quiet);
    Ok(0)
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

pub fn inbox(ctx: &Context, args: &InboxArgs) -> Result<u8> {
    let (rows, now) = inbox_rows(ctx, &args.agent)?;
    render(
        ctx,
        &rows,
        now,
        &format!("nothing waits for {}", args.agent),
        args.quiet.quiet,
    );
    Ok(0)
}

/// The rows of `inbox`: open discussions whose head is addressed to `agent`.
pub fn inbox_rows(ctx: &Context, agent: &str) -> Result<(Vec<Row>, i64)> {
    ids::check_name("agent_id", agent)?;
    rows_of(ctx, true, |d| {
        d.status == Status::Open && d.head().is_some_and(|h| h.to_agent_id == agent)
    })
}
