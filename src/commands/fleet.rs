//! `discuss fleet add|remove|list`.

use super::Context;
use crate::engine::plan_fleet;
use crate::error::{Error, ErrorCode, Result};
use crate::ids;
use crate::ledger::record::FleetOp;
use clap::{Args, Subcommand};
use serde_json::{Value, json};

/// Register agents in fleets (idempotent), remove them, list fleets.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss fleet add fleet-alpha agent-a agent-b\n  discuss fleet list --json"
)]
pub struct FleetArgs {
    #[command(subcommand)]
    pub command: FleetCommand,
}

#[derive(Debug, Subcommand)]
pub enum FleetCommand {
    /// Add agents to a fleet (creating it); agents already in it are skipped
    Add {
        #[arg(value_name = "FLEET")]
        fleet: String,
        #[arg(value_name = "AGENT", required = true)]
        agents: Vec<String>,
    },
    /// Remove agents from a fleet; discussions under way are not touched
    Remove {
        #[arg(value_name = "FLEET")]
        fleet: String,
        #[arg(value_name = "AGENT", required = true)]
        agents: Vec<String>,
    },
    /// List fleets and their members
    List {
        #[arg(value_name = "FLEET")]
        fleet: Option<String>,
    },
}

pub fn run(ctx: &Context, args: &FleetArgs) -> Result<u8> {
    let (op, fleet, agents) = match &args.command {
        FleetCommand::Add { fleet, agents } => (FleetOp::Add, fleet, agents),
        FleetCommand::Remove { fleet, agents } => (FleetOp::Remove, fleet, agents),
        FleetCommand::List { fleet } => return list(ctx, fleet.as_deref()),
    };
    ids::check_name("fleet_id", fleet)?;
    for agent in agents {
        ids::check_name("agent_id", agent)?;
    }
    let global = ctx.ledger.append(&[], |view| {
        let mut global = view.global(ctx.now(view.last_at_ms())).into_owned();
        let records = plan_fleet(&global, op, fleet, agents, &ctx.stamp(view.last_at_ms()));
        records.iter().for_each(|record| global.apply(record));
        Ok((records, global))
    })?;
    let members: Vec<String> = global
        .members(fleet)
        .map(|m| m.iter().cloned().collect())
        .unwrap_or_default();
    if ctx.out.json {
        ctx.out
            .print_json(&json!({"fleet_id": fleet, "agents": members}));
    } else if members.is_empty() {
        ctx.out.print_text(&format!(
            "{fleet}: no members (the fleet no longer exists)\n"
        ));
    } else {
        ctx.out
            .print_text(&format!("{fleet}: {}\n", members.join(" ")));
    }
    Ok(0)
}

fn list(ctx: &Context, only: Option<&str>) -> Result<u8> {
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
    let fleets: Vec<Value> = global
        .fleets
        .iter()
        .filter(|(id, _)| only.is_none_or(|o| o == id.as_str()))
        .map(|(id, members)| json!({"fleet_id": id, "agents": members}))
        .collect();
    if ctx.out.json {
        ctx.out.print_json(&json!({ "fleets": fleets }));
    } else if fleets.is_empty() {
        ctx.out
            .print_text("no fleets; add one with `discuss fleet add FLEET AGENT...`\n");
    } else {
        let mut table = crate::output::new_table(&["fleet", "agents"]);
        for (id, members) in global
            .fleets
            .iter()
            .filter(|(id, _)| only.is_none_or(|o| o == id.as_str()))
        {
            table.add_row(vec![
                id.clone(),
                members.iter().cloned().collect::<Vec<_>>().join(" "),
            ]);
        }
        ctx.out.print_text(&format!("{table}\n"));
    }
    Ok(0)
}
