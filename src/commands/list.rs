//! `discuss list` and `discuss inbox`: one row per discussion. Read-only.

use super::Context;
use crate::error::Result;
use crate::operations::lists::{inbox_rows, listed, parse_statuses};
use crate::output::{Answer, RowsView};
use clap::Args;

/// List discussions, newest first.
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

/// Discussions whose head is addressed to the agent: open ones (what it
/// could be woken for) and its live turn (active; the row's
/// live_attempt_id is the attempt to reply in). Reading it wakes nothing
/// and writes nothing.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  discuss inbox --agent agent-b")]
pub(crate) struct InboxArgs {
    /// The agent
    #[arg(long, value_name = "A", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
    pub agent: String,
    #[command(flatten)]
    pub quiet: super::QuietArgs,
}

pub(crate) fn run<'a>(ctx: &'a Context, args: &ListArgs) -> Result<Answer<'a>> {
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

pub(crate) fn inbox<'a>(ctx: &'a Context, args: &InboxArgs) -> Result<Answer<'a>> {
    let (rows, now_ms) = inbox_rows(ctx, &args.agent)?;
    Ok(Answer::new(RowsView {
        rows,
        now_ms,
        empty: format!("nothing waits for {}", args.agent),
        ledger: &ctx.ledger,
    })
    .quiet(args.quiet.quiet))
}
