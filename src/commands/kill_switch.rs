//! `discuss kill-switch [status] | on [SCOPE] --reason TEXT | off [SCOPE]`.

use super::Context;
use crate::error::Result;
use crate::output::{Answer, KillSwitchView};
use crate::record::Scope;
use clap::{Args, Subcommand};

// Halts: the global switch, or one of a fleet, an agent or a discussion.
// While a switch is engaged, the asks, wakes and replies it covers are
// refused and supervisors kill the children it covers. Reading is never
// blocked, escalations are still delivered, and deadlines run on.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    discuss kill-switch on --reason 'runaway loop in fleet-alpha'\n  \
    discuss kill-switch on --agent agent-b --reason 'ignores its budget'\n  \
    discuss kill-switch off --agent agent-b\n  \
    discuss kill-switch status")]
pub(crate) struct KillSwitchArgs {
    #[command(subcommand)]
    pub command: Option<KillSwitchCommand>,
}

// One scope, or none for the global switch.
#[derive(Debug, Args)]
#[group(multiple = false)]
pub(crate) struct ScopeArgs {
    /// The switch of one fleet: asks in it, wakes and replies in its
    /// discussions
    #[arg(long, value_name = "FLEET", add = clap_complete::ArgValueCandidates::new(crate::complete::fleets))]
    pub fleet: Option<String>,
    /// The switch of one agent: everything it takes part in, in any fleet
    #[arg(long, value_name = "AGENT", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
    pub agent: Option<String>,
    /// The switch of one discussion (an id or a unique prefix)
    #[arg(long, value_name = "DSC")]
    pub discussion: Option<String>,
}

impl ScopeArgs {
    fn scope(&self) -> Option<Scope> {
        match (&self.fleet, &self.agent, &self.discussion) {
            (Some(fleet), _, _) => Some(Scope::Fleet(fleet.clone())),
            (_, Some(agent), _) => Some(Scope::Agent(agent.clone())),
            (_, _, Some(discussion)) => Some(Scope::Discussion(discussion.clone())),
            _ => None,
        }
    }
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum KillSwitchCommand {
    /// Show the global switch and every engaged scoped one (the default)
    Status,
    /// Engage a switch
    // `engage` and `release` are the words the help and the console use.
    #[command(alias = "engage")]
    On {
        #[command(flatten)]
        scope: ScopeArgs,
        /// Why; shown to everyone who is refused
        #[arg(long)]
        reason: String,
    },
    /// Release a switch (the others stay as they are)
    #[command(alias = "release")]
    Off {
        #[command(flatten)]
        scope: ScopeArgs,
    },
}

pub(crate) fn run(ctx: &Context, args: &KillSwitchArgs) -> Result<Answer> {
    let global = match &args.command {
        None | Some(KillSwitchCommand::Status) => {
            let view = ctx.ledger.view(&[])?;
            view.global(ctx.now(view.last_at_ms())).into_owned()
        }
        Some(KillSwitchCommand::On { scope, reason }) => crate::operations::admin::set_kill_switch(
            ctx,
            true,
            Some(reason.clone()),
            scope.scope(),
        )?,
        Some(KillSwitchCommand::Off { scope }) => {
            crate::operations::admin::set_kill_switch(ctx, false, None, scope.scope())?
        }
    };
    Ok(Answer::new(KillSwitchView::from(&global)))
}
