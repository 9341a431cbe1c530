//! `discuss wake`: the seed's `wake_agent`.

use super::{Context, SuperviseArgs};
use crate::engine::WakeRequest;
use crate::error::Result;
use crate::operations;
use crate::output::{Answer, WakeView};
use clap::Args;

// Reserve one turn for the recipient of the head: atomic, budgeted.
//
// Charges one turn whatever the outcome. Without a command it only
// reserves and prints the attempt; the agent then answers with `reply`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss wake --agent agent-b --discussion dsc_… --expected-head msg_…"
)]
pub(crate) struct WakeArgs {
    /// The agent to wake: the recipient of the head
    #[arg(long, value_name = "AGENT", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
    pub agent: String,
    /// The discussion
    #[arg(long, value_name = "DSC", add = clap_complete::ArgValueCompleter::new(crate::complete::discussions))]
    pub discussion: String,
    /// The head message the caller saw; refused as stale_head if it moved
    #[arg(long, value_name = "MSG")]
    pub expected_head: String,
    /// Under an approval gate, wait for a person's decision (or the
    /// request's expiry), then reserve or be refused
    #[arg(long)]
    pub wait_approval: bool,
    #[command(flatten)]
    pub live: super::wake_into::IntoArgs,
    #[command(flatten)]
    pub idempotency: super::IdempotencyArgs,
    #[command(flatten)]
    pub quiet: super::QuietArgs,
    #[command(flatten)]
    pub supervise: SuperviseArgs,
}

pub(crate) fn run(ctx: &Context, args: &WakeArgs) -> Result<Answer> {
    let discussion = operations::resolve_discussion(ctx, &args.discussion)?;
    let request = WakeRequest::new(&args.agent, &discussion, &args.expected_head)?;
    if let Some(into) = &args.live.into {
        let key = args.idempotency.key()?;
        return Ok(
            super::wake_into::run(ctx, &args.live, into, request, key, args.wait_approval)?
                .quiet(args.quiet.quiet),
        );
    }
    let supervise = args.supervise.options()?;
    let key = args.idempotency.key()?;
    let reserved_at = std::time::Instant::now();
    let (discussion, attempt, replayed) =
        operations::wake::wake(ctx, &request, key, args.wait_approval)?;
    let supervised = super::supervise(
        ctx,
        supervise,
        &discussion,
        Some(&attempt),
        replayed,
        reserved_at,
    )?;
    Ok(Answer::new(WakeView {
        discussion_id: discussion.id,
        attempt,
        supervised,
        replayed,
    })
    .quiet(args.quiet.quiet))
}
