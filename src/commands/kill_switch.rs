//! `discuss kill-switch [status] | on --reason TEXT | off`.

use super::Context;
use crate::error::Result;
use crate::output::{Answer, KillSwitchView};
use clap::{Args, Subcommand};

/// The global halt: while engaged, ask, wake and reply are refused and
/// supervisors kill their children. Reading is never blocked.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss kill-switch on --reason 'runaway loop in fleet-alpha'\n  discuss kill-switch off"
)]
pub(crate) struct KillSwitchArgs {
    #[command(subcommand)]
    pub command: Option<KillSwitchCommand>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum KillSwitchCommand {
    /// Show whether the switch is engaged (the default)
    Status,
    /// Engage the switch
    On {
        /// Why; shown to everyone who is refused
        #[arg(long)]
        reason: String,
    },
    /// Release the switch
    Off,
}

pub(crate) fn run(ctx: &Context, args: &KillSwitchArgs) -> Result<Answer> {
    let state = match &args.command {
        None | Some(KillSwitchCommand::Status) => {
            let view = ctx.ledger.view(&[])?;
            view.global(ctx.now(view.last_at_ms())).kill_switch.clone()
        }
        Some(KillSwitchCommand::On { reason }) => {
            crate::operations::admin::set_kill_switch(ctx, true, Some(reason.clone()))?
        }
        Some(KillSwitchCommand::Off) => {
            crate::operations::admin::set_kill_switch(ctx, false, None)?
        }
    };
    Ok(Answer::new(KillSwitchView::from(state)))
}
