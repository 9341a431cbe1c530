//! `discuss quota set N [--agent AGENT] | show`.

use super::Context;
use crate::discussion::envelope::check_range;
use crate::engine::plan_quota;
use crate::error::Result;
use crate::global::{DEFAULT_WAKES_PER_HOUR, Global};
use crate::ids;
use crate::ledger::record::MAX_WAKES_PER_HOUR;
use clap::{Args, Subcommand};
use serde_json::{Value, json};

/// Hourly wake quotas: reservations for one woken agent in any rolling 60
/// minutes. The default applies to agents without their own quota.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss quota set 10 --agent agent-b\n  discuss quota show --json"
)]
pub struct QuotaArgs {
    #[command(subcommand)]
    pub command: QuotaCommand,
}

#[derive(Debug, Subcommand)]
pub enum QuotaCommand {
    /// Set the quota of one agent, or the default (30 when never set)
    Set {
        /// Wakes per rolling hour (0 to 100000)
        #[arg(value_name = "N", allow_negative_numbers = true)]
        wakes_per_hour: i64,
        /// The agent; without it, the default is set
        #[arg(long, value_name = "AGENT")]
        agent: Option<String>,
    },
    /// Show the default, each agent's quota and its wakes in the last hour
    Show,
}

pub fn run(ctx: &Context, args: &QuotaArgs) -> Result<u8> {
    let (global, now) = match &args.command {
        QuotaCommand::Set {
            wakes_per_hour,
            agent,
        } => {
            check_range(
                "wakes_per_hour",
                *wakes_per_hour,
                (0, i64::from(MAX_WAKES_PER_HOUR)),
            )?;
            if let Some(agent) = agent {
                ids::check_name("agent_id", agent)?;
            }
            ctx.ledger.append(&[], |view| {
                let stamp = ctx.stamp(view.last_at_ms());
                let records = plan_quota(agent.clone(), *wakes_per_hour as u32, &stamp);
                let mut global = view.global(stamp.at_ms).into_owned();
                records.iter().for_each(|record| global.apply(record));
                Ok((records, (global, stamp.at_ms)))
            })?
        }
        QuotaCommand::Show => {
            let view = ctx.ledger.view(&[])?;
            {
                let now = ctx.now(view.last_at_ms());
                (view.global(now).into_owned(), now)
            }
        }
    };
    let view = to_json(&global, now);
    if ctx.out.json {
        ctx.out.print_json(&view);
    } else {
        let mut table =
            crate::output::new_table(&["agent", "wakes per hour", "wakes in the last hour"]);
        table.add_row(vec![
            "(default)".to_owned(),
            view["default_wakes_per_hour"].to_string(),
            String::new(),
        ]);
        for agent in view["agents"].as_array().into_iter().flatten() {
            table.add_row(vec![
                agent["agent_id"].as_str().unwrap_or_default().to_owned(),
                agent["wakes_per_hour"].to_string(),
                agent["wakes_last_hour"].to_string(),
            ]);
        }
        ctx.out.print_text(&format!("{table}\n"));
    }
    Ok(0)
}

/// `{"default_wakes_per_hour", "agents":[{"agent_id","wakes_per_hour","own_quota","wakes_last_hour"}]}`
/// listing agents with their own quota or a wake in the last hour.
pub fn to_json(global: &Global, now_ms: i64) -> Value {
    let mut agents: Vec<&String> = global
        .agent_quotas
        .keys()
        .chain(global.reservations.keys())
        .collect();
    agents.sort();
    agents.dedup();
    let rows: Vec<Value> = agents
        .into_iter()
        .map(|agent| (agent, global.wakes_in_window(agent, now_ms).len()))
        .filter(|(agent, used)| *used > 0 || global.agent_quotas.contains_key(*agent))
        .map(|(agent, used)| {
            json!({
                "agent_id": agent,
                "wakes_per_hour": global.quota_of(agent),
                "own_quota": global.agent_quotas.contains_key(agent),
                "wakes_last_hour": used,
            })
        })
        .collect();
    json!({
        "default_wakes_per_hour": global.default_quota.unwrap_or(DEFAULT_WAKES_PER_HOUR),
        "agents": rows,
    })
}
