//! `discuss reply`: the seed's `reply_discussion`.

use super::{Context, PayloadArgs};
use crate::engine::ReplyRequest;
use crate::error::Result;
use crate::operations;
use crate::output::{Answer, ReplyView};
use crate::spend::Usage;
use crate::supervisor::UsageReport;
use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum ReplyType {
    Question,
    Result,
}

// Answer within a reserved turn: a question back, or a result.
//
// A supervised child finds --agent, --discussion, --attempt and --reply-to
// in its environment and needs only --type and --payload.
#[derive(Debug, Args)]
#[command(
    after_help = "Example (inside a supervised run):\n  discuss reply --type result --payload '{\"body\":\"Yes, proceed.\"}' --close"
)]
pub(crate) struct ReplyArgs {
    /// The woken agent
    #[arg(long, env = "DISCUSS_AGENT_ID", value_name = "AGENT", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
    pub agent: String,
    /// The discussion
    #[arg(long, env = "DISCUSS_DISCUSSION_ID", value_name = "DSC", add = clap_complete::ArgValueCompleter::new(crate::complete::discussions))]
    pub discussion: String,
    /// The attempt `wake` reserved
    #[arg(long, env = "DISCUSS_ATTEMPT_ID", value_name = "ATT")]
    pub attempt: String,
    /// The head message being answered
    #[arg(long, env = "DISCUSS_REPLY_TO", value_name = "MSG")]
    pub reply_to: String,
    /// A question back to the other agent, or a result
    #[arg(long = "type", value_enum, value_name = "TYPE")]
    pub kind: ReplyType,
    #[command(flatten)]
    pub payload: PayloadArgs,
    /// End the discussion with this reply
    #[arg(long)]
    pub close: bool,
    /// What this turn cost: '{"input_tokens":N,"output_tokens":N,"cost_usd":X}'
    /// (each field optional; counts against the discussion's budgets)
    #[arg(long, value_name = "JSON")]
    pub usage: Option<String>,
    /// The usage file a supervisor names, read when --usage is not given
    #[arg(long, env = "DISCUSS_USAGE_FILE", value_name = "PATH", hide = true)]
    pub usage_file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub idempotency: super::IdempotencyArgs,
}

pub(crate) fn run(ctx: &Context, args: &ReplyArgs) -> Result<Answer> {
    let kind = match args.kind {
        ReplyType::Question => "question",
        ReplyType::Result => "result",
    };
    let discussion = operations::resolve_discussion(ctx, &args.discussion)?;
    let request = ReplyRequest::new(
        &args.agent,
        &discussion,
        &args.attempt,
        &args.reply_to,
        kind,
        &args.payload.read()?,
        args.close,
    )?;
    let request = match (&args.usage, &args.usage_file) {
        (Some(usage), _) => request.with_usage(Some(Usage::parse(usage)?)),
        (None, Some(file)) => match crate::supervisor::read_usage_file(file) {
            UsageReport::Read(usage) => request.with_usage(Some(usage)),
            UsageReport::Unreadable => request.with_usage_unreadable(true),
            UsageReport::None => request,
        },
        (None, None) => request,
    };
    let key = args.idempotency.key()?;
    let (discussion, message_id, replayed) = operations::reply::reply(ctx, &request, key)?;
    Ok(Answer::new(ReplyView {
        discussion,
        message_id,
        replayed,
    }))
}
