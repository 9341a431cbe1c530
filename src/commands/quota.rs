//! `discuss quota set N [--agent AGENT] | show`.

use super::Context;
use crate::error::Result;
use crate::output::{Answer, QuotaView};
use clap::{Args, Subcommand};

// Hourly wake quotas (reservations for one woken agent in any rolling 60
// minutes) and spend caps (the tokens and dollars its turns report, in a
// rolling hour and day). The default applies to agents without their own.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  discuss quota set 10 --agent agent-b\n  discuss quota set --tokens-per-hour 200000 --cost-usd-per-day 5 \\\n      --agent agent-b\n  discuss quota show --json"
)]
pub(crate) struct QuotaArgs {
    #[command(subcommand)]
    pub command: QuotaCommand,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum QuotaCommand {
    /// Set the quotas of one agent, or the default (30 wakes, no spend cap
    /// when never set)
    #[command(group = clap::ArgGroup::new("quota").required(true).multiple(true)
        .args(["wakes_per_hour", "tokens_per_hour", "cost_usd_per_day"]))]
    Set {
        /// Wakes per rolling hour (0 to 100000)
        #[arg(value_name = "N", allow_negative_numbers = true)]
        wakes_per_hour: Option<i64>,
        /// Cap on the tokens (input + output) the agent's turns report in
        /// any rolling hour (0 to 1000000000)
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        tokens_per_hour: Option<i64>,
        /// Cap on the US dollars the agent's turns report in any rolling
        /// 24 hours (0 to 1000000, 9 decimals)
        #[arg(long, value_name = "USD", allow_negative_numbers = true)]
        cost_usd_per_day: Option<String>,
        /// The agent; without it, the default is set
        #[arg(long, value_name = "AGENT", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
        agent: Option<String>,
        /// Set it although the agent is in no fleet and no open discussion
        /// yet (a typo is refused otherwise)
        #[arg(long, requires = "agent")]
        allow_unknown_agent: bool,
    },
    /// Show the default, each agent's quota and its wakes in the last hour
    Show,
}

pub(crate) fn run(ctx: &Context, args: &QuotaArgs) -> Result<Answer> {
    let (global, now) = match &args.command {
        QuotaCommand::Set {
            wakes_per_hour,
            tokens_per_hour,
            cost_usd_per_day,
            agent,
            allow_unknown_agent,
        } => {
            let tokens = tokens_per_hour.map(serde_json::Value::from);
            let cost = cost_usd_per_day.clone().map(serde_json::Value::from);
            let request = crate::operations::admin::QuotaRequest {
                wakes_per_hour: *wakes_per_hour,
                tokens_per_hour: tokens.as_ref(),
                cost_usd_per_day: cost.as_ref(),
                allow_unknown_agent: *allow_unknown_agent,
            };
            crate::operations::admin::set_quota(ctx, agent.as_deref(), &request)?
        }
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
