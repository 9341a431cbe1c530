//! `discuss kill-switch [status] | on --reason TEXT | off`.

use super::Context;
use crate::engine::plan_kill_switch;
use crate::error::{Error, ErrorCode, Result};
use crate::global::KillSwitchState;
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
            if reason.trim().is_empty() {
                return Err(
                    Error::new(ErrorCode::InvalidArgument, "--reason must not be empty")
                        .hint("say why, e.g. --reason 'runaway loop'"),
                );
            }
            set(ctx, true, Some(reason.clone()))?
        }
        Some(KillSwitchCommand::Off) => set(ctx, false, None)?,
    };
    Ok(Answer::new(KillSwitchView::from(state)))
}

fn set(ctx: &Context, engaged: bool, reason: Option<String>) -> Result<KillSwitchState> {
    ctx.ledger.append_global(|view| {
        let stamp = ctx.stamp(view.last_at_ms());
        let state = KillSwitchState {
            engaged,
            reason: reason.clone(),
            changed_at_ms: Some(stamp.at_ms),
            changed_by: Some(stamp.by.clone()),
        };
        Ok((plan_kill_switch(engaged, reason, &stamp), state))
    })
}
