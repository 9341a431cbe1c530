//! `discuss wake`: the seed's `wake_agent`.

use super::{Context, SuperviseArgs};
use crate::discussion::{Attempt, Discussion};
use crate::engine::{WakeRequest, idempotency, plan_wake};
use crate::error::Result;
use crate::output::{Answer, WakeView};
use clap::Args;

/// Reserve one turn for the recipient of the head: atomic, budgeted.
///
/// Charges one turn whatever the outcome. Without a command it only
/// reserves and prints the attempt; the agent then answers with `reply`.
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
    #[command(flatten)]
    pub idempotency: super::IdempotencyArgs,
    #[command(flatten)]
    pub quiet: super::QuietArgs,
    #[command(flatten)]
    pub supervise: SuperviseArgs,
}

pub(crate) fn run(ctx: &Context, args: &WakeArgs) -> Result<Answer<'static>> {
    let discussion = super::resolve_discussion(ctx, &args.discussion)?;
    let request = WakeRequest::new(&args.agent, &discussion, &args.expected_head)?;
    let supervise = args.supervise.options()?;
    let key = args.idempotency.key()?;
    let reserved_at = std::time::Instant::now();
    let (discussion, attempt, replayed) = perform(ctx, &request, key)?;
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

/// Reserves the attempt; with an idempotency key already used for this
/// very request, writes nothing and answers the original (`true` =
/// replayed).
pub(crate) fn perform(
    ctx: &Context,
    request: &WakeRequest,
    key: Option<&str>,
) -> Result<(Discussion, Attempt, bool)> {
    let ((discussion, attempt), replayed) = super::write_once(
        ctx,
        &[&request.discussion_id],
        key,
        &request.digest,
        |earlier| {
            let discussion = idempotency::as_written(earlier)?;
            let attempt = match &earlier.first.body {
                crate::ledger::Body::Receipt(r) => r.attempt_id.as_deref(),
                _ => None,
            }
            .and_then(|id| discussion.attempt(id).cloned())
            .ok_or_else(|| {
                crate::error::Error::new(
                    crate::error::ErrorCode::Internal,
                    "the record of an idempotency key holds no reservation",
                )
            })?;
            Ok((discussion, attempt))
        },
        |view| {
            plan_wake(
                &view.global(ctx.now(view.last_at_ms())),
                &view.discussion(&request.discussion_id),
                request,
                &ctx.stamp(view.last_at_ms()),
            )
        },
    )
    .map_err(|err| super::near_match(err, ctx, &request.discussion_id))?;
    Ok((discussion, attempt, replayed))
}
