//! `discuss list` and `discuss inbox`: one row per discussion. Read-only.

use super::Context;
use crate::clock::format_ms;
use crate::discussion::{Discussion, Status, derive};
use crate::error::{Error, ErrorCode, Result};
use crate::ids;
use crate::ledger::Snapshot;
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
}

/// Discussions whose head is addressed to the agent and which are open:
/// what it could be woken for. Reading it wakes nothing and writes nothing.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  discuss inbox --agent agent-b")]
pub struct InboxArgs {
    /// The agent
    #[arg(long, value_name = "A")]
    pub agent: String,
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

/// Every discussion in the ledger, derived at `now`, newest first.
pub fn all_discussions(snapshot: &Snapshot, now: i64) -> Vec<Discussion> {
    let mut grouped: std::collections::HashMap<&str, Vec<&crate::ledger::Record>> =
        Default::default();
    for record in &snapshot.records {
        if let Some(id) = record.discussion_id() {
            grouped.entry(id).or_default().push(record);
        }
    }
    let mut all: Vec<Discussion> = grouped
        .into_iter()
        .filter_map(|(id, records)| derive(id, &records, now))
        .collect();
    all.sort_by(|a, b| {
        b.updated_at_ms
            .cmp(&a.updated_at_ms)
            .then_with(|| b.id.cmp(&a.id))
    });
    all
}

pub fn row_json(d: &Discussion) -> Value {
    let root = d.root.as_ref();
    json!({
        "discussion_id": d.id,
        "fleet_id": root.map(|r| r.fleet_id.clone()),
        "participants": root.map_or_else(Vec::new, |r| vec![r.asker.clone(), r.peer.clone()]),
        "status": d.status.as_str(),
        "turns_used": d.turns_used,
        "max_turns": d.max_turns(),
        "head_to_agent_id": d.head().map(|h| h.to_agent_id.clone()),
        "updated_at": format_ms(d.updated_at_ms),
        "escalated": d.escalation.is_some(),
    })
}

fn render(ctx: &Context, rows: &[Discussion], now: i64, empty: &str) {
    if ctx.out.json {
        ctx.out
            .print_json(&json!({"discussions": rows.iter().map(row_json).collect::<Vec<_>>()}));
        return;
    }
    if rows.is_empty() {
        ctx.out.print_text(&format!("{empty}\n"));
        return;
    }
    let mut table = crate::output::new_table(&[
        "discussion",
        "status",
        "participants",
        "turns",
        "next",
        "updated",
    ]);
    for d in rows {
        let participants = d
            .root
            .as_ref()
            .map_or(String::new(), |r| format!("{} ⇄ {}", r.asker, r.peer));
        let status = if d.escalation.is_some() {
            format!("{} (escalated)", ctx.out.status(d.status))
        } else {
            ctx.out.status(d.status)
        };
        table.add_row(vec![
            d.id.clone(),
            status,
            participants,
            format!("{}/{}", d.turns_used, d.max_turns()),
            d.head().map(|h| h.to_agent_id.clone()).unwrap_or_default(),
            crate::output::relative(d.updated_at_ms, now),
        ]);
    }
    crate::output::keep_whole(&mut table, &[0, 3, 5]);
    ctx.out.print_text(&format!("{table}\n"));
}

pub fn run(ctx: &Context, args: &ListArgs) -> Result<u8> {
    let statuses = parse_statuses(&args.statuses)?;
    if let Some(agent) = &args.agent {
        ids::check_name("agent_id", agent)?;
    }
    if let Some(fleet) = &args.fleet {
        ids::check_name("fleet_id", fleet)?;
    }
    let snapshot = ctx.ledger.read()?;
    let now = ctx.now(snapshot.last_at_ms);
    let rows: Vec<Discussion> = all_discussions(&snapshot, now)
        .into_iter()
        .filter(|d| statuses.is_empty() || statuses.contains(&d.status))
        .filter(|d| {
            args.agent.as_ref().is_none_or(|a| {
                d.root
                    .as_ref()
                    .is_some_and(|r| &r.asker == a || &r.peer == a)
            })
        })
        .filter(|d| {
            args.fleet
                .as_ref()
                .is_none_or(|f| d.root.as_ref().is_some_and(|r| &r.fleet_id == f))
        })
        .collect();
    render(ctx, &rows, now, "no discussions");
    Ok(0)
}

pub fn inbox(ctx: &Context, args: &InboxArgs) -> Result<u8> {
    ids::check_name("agent_id", &args.agent)?;
    let snapshot = ctx.ledger.read()?;
    let now = ctx.now(snapshot.last_at_ms);
    let rows: Vec<Discussion> = all_discussions(&snapshot, now)
        .into_iter()
        .filter(|d| {
            d.status == Status::Open && d.head().is_some_and(|h| h.to_agent_id == args.agent)
        })
        .collect();
    render(
        ctx,
        &rows,
        now,
        &format!("nothing waits for {}", args.agent),
    );
    Ok(0)
}
