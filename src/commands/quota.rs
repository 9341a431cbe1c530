//! `discuss quota set N [--agent AGENT] | show`.

use super::Context;
use crate::error::Result;
use crate::output::{Answer, QuotaView};
use clap::{Args, Subcommand};

/// Hourly wake quotas: reservations for one woken agent in any rolling 60
/// minutes. The default applies to agents without their own quota.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss quota set 10 --agent agent-b\n  discuss quota show --json"
)]
pub(crate) struct QuotaArgs {
    #[command(subcommand)]
    pub command: QuotaCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum QuotaCommand {
    /// Set the quota of one agent, or the default (30 when never set)
    Set {
        /// Wakes per rolling hour (0 to 100000)
        #[arg(value_name = "N", allow_negative_numbers = true)]
        wakes_per_hour: i64,
        /// The agent; without it, the default is set
        #[arg(long, value_name = "AGENT", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
        agent: Option<String>,
    },
    /// Show the default, each agent's quota and its wakes in the last hour
    Show,
}

pub(crate) fn run(ctx: &Context, args: &QuotaArgs) -> Result<Answer> {
    let (global, now) = match &args.command {
        QuotaCommand::Set {
            wakes_per_hour,
            agent,
        } => crate::operations::admin::set_quota(ctx, agent.as_deref(), *wakes_per_hour)?,
        QuotaCommand::Show => {
            let view = ctx.ledger.view(&[])?;
            {
                let now = ctx.now(view.last_at_ms());
                (view.global(now).into_owned(), now)
            }
        }
    };
    Ok(Answer::new(QuotaView::of(&global, now)))
}
