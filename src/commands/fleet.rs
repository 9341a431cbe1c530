//! `discuss fleet add|remove|list`.

use super::Context;
use crate::error::{Error, ErrorCode, Result};
use crate::ids;
use crate::output::{Answer, FleetView, FleetsView};
use crate::record::FleetOp;
use clap::{Args, Subcommand};

// Register agents in fleets (idempotent), remove them, list fleets.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss fleet add fleet-alpha agent-a agent-b\n  discuss fleet list --json"
)]
pub(crate) struct FleetArgs {
    #[command(subcommand)]
    pub command: FleetCommand,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum FleetCommand {
    /// Add agents to a fleet (creating it); agents already in it are skipped
    Add {
        #[arg(value_name = "FLEET", add = clap_complete::ArgValueCandidates::new(crate::complete::fleets))]
        fleet: String,
        #[arg(value_name = "AGENT", required = true, add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
        agents: Vec<String>,
    },
    /// Remove agents from a fleet; discussions under way are not touched
    Remove {
        #[arg(value_name = "FLEET", add = clap_complete::ArgValueCandidates::new(crate::complete::fleets))]
        fleet: String,
        #[arg(value_name = "AGENT", required = true, add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
        agents: Vec<String>,
    },
    /// List fleets and their members
    List {
        #[arg(value_name = "FLEET", add = clap_complete::ArgValueCandidates::new(crate::complete::fleets))]
        fleet: Option<String>,
    },
}

pub(crate) fn run(ctx: &Context, args: &FleetArgs) -> Result<Answer> {
    let (op, fleet, agents) = match &args.command {
        FleetCommand::Add { fleet, agents } => (FleetOp::Add, fleet, agents),
        FleetCommand::Remove { fleet, agents } => (FleetOp::Remove, fleet, agents),
        FleetCommand::List { fleet } => return list(ctx, fleet.as_deref()),
    };
    let none = Vec::new();
    let (add, remove) = match op {
        FleetOp::Add => (agents, &none),
        FleetOp::Remove => (&none, agents),
    };
    let global = crate::operations::admin::change_fleet(ctx, fleet, add, remove)?;
    let agents = global
        .members(fleet)
        .map(|m| m.iter().cloned().collect())
        .unwrap_or_default();
    Ok(Answer::new(FleetView {
        fleet_id: fleet.clone(),
        agents,
    }))
}

fn list(ctx: &Context, only: Option<&str>) -> Result<Answer> {
    if let Some(fleet) = only {
        ids::check_name("fleet_id", fleet)?;
    }
    let view = ctx.ledger.view(&[])?;
    let global = view.global(ctx.now(view.last_at_ms())).into_owned();
    if let Some(fleet) = only
        && global.members(fleet).is_none()
    {
        return Err(
            Error::new(ErrorCode::UnknownFleet, format!("no fleet {fleet}"))
                .detail("fleet_id", fleet)
                .hint("`discuss fleet list` shows every fleet"),
        );
    }
    Ok(Answer::new(FleetsView::of(&global, only)))
}
