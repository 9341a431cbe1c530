//! `discuss ask`: the seed's `ask_peer`.

use super::{Context, PayloadArgs, SuperviseArgs};
use crate::engine::AskRequest;
use crate::error::Result;
use crate::operations;
use crate::output::{Answer, AskView};
use clap::Args;

// Start a discussion: the root message (turn 1) from --from to --to.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss ask --from agent-a --to agent-b --fleet fleet-alpha \\\n    \
    --payload '{\"body\":\"Refactor auth module?\"}' --max-turns 4"
)]
pub(crate) struct AskArgs {
    /// The asking agent
    #[arg(long, value_name = "AGENT", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
    pub from: String,
    /// The peer (exactly one: group discussions are refused)
    #[arg(long, value_name = "AGENT", num_args = 1.., required = true, add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
    pub to: Vec<String>,
    /// The fleet both agents belong to
    #[arg(long, value_name = "FLEET", add = clap_complete::ArgValueCandidates::new(crate::complete::fleets))]
    pub fleet: String,
    #[command(flatten)]
    pub payload: PayloadArgs,
    /// Turn budget, the root included (2 to 32)
    #[arg(long, default_value_t = crate::tools::DEFAULT_MAX_TURNS, allow_negative_numbers = true)]
    pub max_turns: i64,
    /// Conversation deadline after the root, in ms (1000 to 900000)
    #[arg(long, default_value_t = crate::tools::DEFAULT_TIMEOUT_MS, allow_negative_numbers = true)]
    pub timeout_ms: i64,
    /// Deadline of each turn, in ms (1000 to 300000, at most --timeout-ms)
    #[arg(long, default_value_t = crate::tools::DEFAULT_TURN_TIMEOUT_MS, allow_negative_numbers = true)]
    pub turn_timeout_ms: i64,
    /// Token budget: exhausted when the turns report this many input +
    /// output tokens (1 to 1000000000)
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_tokens: Option<i64>,
    /// Cost budget in US dollars, e.g. 0.50: exhausted when the turns
    /// report this much (above 0, at most 1000000, 9 decimals)
    #[arg(long, value_name = "USD", allow_negative_numbers = true)]
    pub max_cost_usd: Option<String>,
    /// Reserve the peer's first turn in the same atomic write
    #[arg(long)]
    pub wake_peer: bool,
    #[command(flatten)]
    pub idempotency: super::IdempotencyArgs,
    #[command(flatten)]
    pub quiet: super::QuietArgs,
    #[command(flatten)]
    pub supervise: SuperviseArgs,
}

pub(crate) fn run(ctx: &Context, args: &AskArgs) -> Result<Answer> {
    let request = AskRequest::new(
        &args.from,
        &args.to,
        &args.fleet,
        &args.payload.read()?,
        args.max_turns,
        args.timeout_ms,
        args.turn_timeout_ms,
        args.wake_peer,
    )?
    .with_budgets(
        args.max_tokens.map(serde_json::Value::from).as_ref(),
        args.max_cost_usd
            .clone()
            .map(serde_json::Value::from)
            .as_ref(),
    )?;
    let supervise = args.supervise.options()?;
    if supervise.is_some() && !args.wake_peer {
        return Err(crate::error::Error::new(
            crate::error::ErrorCode::InvalidArgument,
            "a command after -- runs the peer's first turn: it needs --wake-peer",
        )
        .hint("add --wake-peer, or wake the peer later with `discuss wake ... -- CMD`"));
    }
    let key = args.idempotency.key()?;
    let reserved_at = std::time::Instant::now();
    let (outcome, replayed) = operations::ask::ask(ctx, &request, key)?;
    let ran = super::supervise(
        ctx,
        supervise,
        &outcome.discussion,
        outcome.attempt.as_ref(),
        replayed,
        reserved_at,
    )?;
    // Status and head as they are after the supervised turn.
    let supervised = match ran {
        Some(ran) => Some((ran, operations::read::load(ctx, &outcome.discussion.id)?.0)),
        None => None,
    };
    // A replay answers as the first time, but suggests a wake only if the
    // root still waits for one.
    let root_waits = if replayed {
        let (now, _) = operations::read::load(ctx, &outcome.discussion.id)?;
        now.status == crate::discussion::Status::Open && now.turns_used == 1
    } else {
        outcome.attempt.is_none()
    };
    Ok(Answer::new(AskView {
        discussion: outcome.discussion,
        attempt: outcome.attempt,
        supervised,
        replayed,
        root_waits,
    })
    .quiet(args.quiet.quiet))
}
