//! `discuss list` and `discuss inbox`: one row per discussion. Read-only.

use super::Context;
use crate::discussion::Row;
use crate::error::Result;
use crate::operations::lists::{inbox_rows, listed, parse_statuses};
use crate::output::{Answer, RowsView};
use clap::Args;

// List discussions, newest first.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  discuss list --status open --status active\n  discuss list --agent agent-b --json | jq -r '.discussions[].discussion_id'"
)]
pub(crate) struct ListArgs {
    /// Only these statuses (repeatable or comma-separated; `terminal` for
    /// closed, deadman, expired, exhausted and invalid)
    #[arg(long = "status", value_name = "S", value_delimiter = ',', add = clap_complete::ArgValueCompleter::new(crate::complete::statuses))]
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

// Discussions whose head is addressed to the agent: open ones (what it
// could be woken for) and its live turn (active; the row's
// live_attempt_id is the attempt to reply in). Reading it wakes nothing
// and writes nothing.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  discuss inbox --agent agent-b")]
pub(crate) struct InboxArgs {
    /// The agent
    #[arg(long, value_name = "A", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
    pub agent: String,
    #[command(flatten)]
    pub quiet: super::QuietArgs,
}

pub(crate) fn run(ctx: &Context, args: &ListArgs) -> Result<Answer> {
    let statuses = parse_statuses(&args.statuses)?;
    let (rows, now_ms) = listed(ctx, &statuses, args.agent.as_deref(), args.fleet.as_deref())?;
    // Said with its filters: a bare "no discussions" from a mistyped
    // --agent would read as an empty ledger.
    let filters: Vec<String> = [
        (!args.statuses.is_empty()).then(|| format!("status {}", args.statuses.join(","))),
        args.agent.as_ref().map(|agent| format!("agent {agent}")),
        args.fleet.as_ref().map(|fleet| format!("fleet {fleet}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    let empty = if filters.is_empty() {
        "no discussions".to_owned()
    } else {
        format!("no discussions ({})", filters.join(", "))
    };
    rows_answer(ctx, rows, now_ms, &empty, args.quiet.quiet, false)
}

pub(crate) fn inbox(ctx: &Context, args: &InboxArgs) -> Result<Answer> {
    let (rows, now_ms) = inbox_rows(ctx, &args.agent)?;
    let empty = format!("nothing waits for {}", args.agent);
    rows_answer(ctx, rows, now_ms, &empty, args.quiet.quiet, true)
}

/// The rows as a view, with what a person's rendering needs of the ledger
/// besides them: where it is, when nothing was found (an empty answer
/// from the wrong path misleads, so a ledger that is not there is said
/// so), and every id, when the terminal is too narrow for whole ones.
fn rows_answer(
    ctx: &Context,
    rows: Vec<Row>,
    now_ms: i64,
    empty: &str,
    quiet: bool,
    live_turns: bool,
) -> Result<Answer> {
    let human = !ctx.out.json && !quiet;
    let location = ctx.ledger.location();
    let empty = if !human || !rows.is_empty() {
        String::new()
    } else if ctx.ledger.exists().unwrap_or(true) {
        format!("{empty} in {location}")
    } else {
        format!("{empty}: there is no ledger at {location} yet")
    };
    let mut view = RowsView {
        rows,
        now_ms,
        empty,
        known_ids: Vec::new(),
        live_turns,
        switches: crate::operations::read::switches(ctx, now_ms)?,
    };
    if human && view.needs_known_ids(&ctx.out.style()) {
        // A shortened id is not worth failing the list for.
        view.known_ids = ctx.ledger.discussion_ids().unwrap_or_default();
    }
    Ok(Answer::new(view).quiet(quiet))
}
