//! `discuss gate set|clear|list`, `discuss approve`, `discuss deny` and
//! `discuss approvals`: a person says yes before a turn that crosses a
//! line runs.

use super::Context;
use crate::error::Result;
use crate::operations::approvals::{self, GateConditions};
use crate::output::{Answer, ApprovalsView, DecidedView, GatesView};
use crate::record::Scope;
use clap::{Args, Subcommand};

// Approval gates: a wake a gate covers reserves nothing and charges
// nothing; it records one request, refused `approval_required` (exit 6)
// until a person grants it (`discuss approve`). A rule covers every wake,
// an agent's, or a fleet's; several conditions: any of them.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    discuss gate set --agent agent-deploy --from-turn 3\n  \
    discuss gate set --fleet fleet-alpha --over-cost-usd 2\n  \
    discuss gate list\n  \
    discuss gate clear --agent agent-deploy")]
pub(crate) struct GateArgs {
    #[command(subcommand)]
    pub command: GateCommand,
}

// One scope, or none for every wake.
#[derive(Debug, Args)]
#[group(multiple = false)]
pub(crate) struct GateScopeArgs {
    /// The wakes in one fleet's discussions
    #[arg(long, value_name = "FLEET", add = clap_complete::ArgValueCandidates::new(crate::complete::fleets))]
    pub fleet: Option<String>,
    /// The wakes of one agent
    #[arg(long, value_name = "AGENT", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
    pub agent: Option<String>,
}

impl GateScopeArgs {
    fn scope(&self) -> Option<Scope> {
        match (&self.fleet, &self.agent) {
            (Some(fleet), _) => Some(Scope::Fleet(fleet.clone())),
            (_, Some(agent)) => Some(Scope::Agent(agent.clone())),
            _ => None,
        }
    }
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum GateCommand {
    /// Set the gate of a scope (replacing its rule)
    #[command(group = clap::ArgGroup::new("condition").required(true).multiple(true)
        .args(["always", "from_turn", "over_cost_usd", "over_tokens"]))]
    Set {
        #[command(flatten)]
        scope: GateScopeArgs,
        /// Every wake it covers asks
        #[arg(long)]
        always: bool,
        /// Wakes that would charge this turn or a later one ask (2 to 32)
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        from_turn: Option<i64>,
        /// Wakes of a discussion whose recorded spend reaches this many
        /// US dollars ask (above 0)
        #[arg(long, value_name = "USD", allow_negative_numbers = true)]
        over_cost_usd: Option<String>,
        /// Wakes of a discussion whose recorded spend reaches this many
        /// tokens ask (1 or more)
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        over_tokens: Option<i64>,
        /// How long a request waits for a decision before it expires (read
        /// as denied): 1000 to 86400000 ms, 900000 unless given, never past
        /// the conversation deadline
        #[arg(long, value_name = "MS", allow_negative_numbers = true)]
        approval_timeout_ms: Option<i64>,
    },
    /// Clear the gate of a scope (the others stay)
    Clear {
        #[command(flatten)]
        scope: GateScopeArgs,
    },
    /// The gates in force
    List,
}

pub(crate) fn run(ctx: &Context, args: &GateArgs) -> Result<Answer> {
    let global = match &args.command {
        GateCommand::Set {
            scope,
            always,
            from_turn,
            over_cost_usd,
            over_tokens,
            approval_timeout_ms,
        } => {
            let conditions = GateConditions {
                always: *always,
                from_turn: *from_turn,
                over_cost_usd: over_cost_usd.clone(),
                over_tokens: *over_tokens,
                approval_timeout_ms: *approval_timeout_ms,
            };
            approvals::set_gate(ctx, scope.scope(), Some(conditions))?
        }
        GateCommand::Clear { scope } => approvals::set_gate(ctx, scope.scope(), None)?,
        GateCommand::List => {
            if !ctx.ledger.exists()? {
                crate::global::Global::default()
            } else {
                let view = ctx.ledger.view(&[])?;
                view.global(ctx.now(view.last_at_ms())).into_owned()
            }
        }
    };
    Ok(Answer::new(GatesView::from(&global)))
}

// Grant one pending approval request: exactly one reservation of that
// agent on that head goes through (a head that moved voids it).
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  discuss approve rcp_… --reason 'third turn is fine'")]
pub(crate) struct ApproveArgs {
    /// The request (its `approval_id`)
    #[arg(value_name = "APPROVAL")]
    pub approval: String,
    /// Why, kept on the record
    #[arg(long)]
    pub reason: Option<String>,
}

// Deny one pending approval request: wakes of that head are refused
// `approval_denied`; the discussion stays as it is (halt it to stop it).
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  discuss deny rcp_… --reason 'costs too much'")]
pub(crate) struct DenyArgs {
    /// The request (its `approval_id`)
    #[arg(value_name = "APPROVAL")]
    pub approval: String,
    /// Why; required, shown to the wake it refuses
    #[arg(long)]
    pub reason: String,
}

pub(crate) fn approve(ctx: &Context, args: &ApproveArgs) -> Result<Answer> {
    let decided = approvals::decide(ctx, &args.approval, true, args.reason.clone())?;
    Ok(Answer::new(DecidedView(decided)))
}

pub(crate) fn deny(ctx: &Context, args: &DenyArgs) -> Result<Answer> {
    let decided = approvals::decide(ctx, &args.approval, false, Some(args.reason.clone()))?;
    Ok(Answer::new(DecidedView(decided)))
}

// The approval requests, oldest first: those that wait for a person
// unless --state says otherwise.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  discuss approvals --json")]
pub(crate) struct ApprovalsArgs {
    /// pending (the default), granted, denied, expired or all
    #[arg(long, value_name = "STATE", default_value = "pending")]
    pub state: String,
}

pub(crate) fn list(ctx: &Context, args: &ApprovalsArgs) -> Result<Answer> {
    let state = approvals::parse_state(&args.state)?;
    Ok(Answer::new(ApprovalsView(approvals::requests(ctx, state)?)))
}
