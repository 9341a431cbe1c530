//! `discuss top`: the operator's live terminal view.

use super::Context;
use crate::error::Result;
use crate::output::Answer;
use clap::Args;
use std::io::IsTerminal;

// A live full-screen view for operators: what needs a person first (approvals,
// undelivered escalations, turns not picked up), then live turns, halts,
// counts and spend. Every key is on screen.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  discuss top --fleet fleet-alpha")]
pub(crate) struct TopArgs {
    /// Only discussions of this fleet
    #[arg(long, value_name = "FLEET", add = clap_complete::ArgValueCandidates::new(crate::complete::fleets))]
    pub fleet: Option<String>,
    /// Only discussions this agent takes part in
    #[arg(long, value_name = "AGENT", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
    pub agent: Option<String>,
}

pub(crate) fn run(ctx: &Context, args: &TopArgs) -> Result<Answer> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(crate::top::needs_terminal());
    }
    if let Some(fleet) = &args.fleet {
        crate::ids::check_name("fleet_id", fleet)?;
    }
    if let Some(agent) = &args.agent {
        crate::ids::check_name("agent_id", agent)?;
    }
    let filter = crate::top::snapshot::Filter {
        fleet: args.fleet.clone(),
        agent: args.agent.clone(),
    };
    crate::top::run(ctx, filter, ctx.out.color)?;
    Ok(Answer::streamed(0))
}
