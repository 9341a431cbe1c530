//! `discuss show`: the seed's `get_discussion`.

use super::Context;
use crate::discussion::{Discussion, derive};
use crate::engine::unknown_discussion;
use crate::error::Result;
use crate::ids;
use crate::output::{Answer, DiscussionView, Form};
use clap::Args;

/// Show the derived state of a discussion: status, transcript, attempts,
/// escalation and integrity findings.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  discuss show dsc_… --json | jq -r .status")]
pub(crate) struct ShowArgs {
    /// The discussion
    #[arg(value_name = "DSC", add = clap_complete::ArgValueCompleter::new(crate::complete::discussions))]
    pub discussion: String,
    /// Leave out the receipts of each transcript entry
    #[arg(long)]
    pub no_receipts: bool,
    /// Human output as a terminal table, or a Markdown document with
    /// every body whole (--json prints the contract's object)
    #[arg(long, value_enum, default_value_t = ShowFormat::Human)]
    pub format: ShowFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ShowFormat {
    Human,
    Markdown,
}

pub(crate) fn run(ctx: &Context, args: &ShowArgs) -> Result<Answer<'static>> {
    let (discussion, now_ms) = load(ctx, &args.discussion)?;
    let form = match args.format {
        ShowFormat::Human => Form::Usual,
        ShowFormat::Markdown => Form::Markdown,
    };
    Ok(Answer::new(DiscussionView {
        discussion,
        now_ms,
        receipts: !args.no_receipts,
    })
    .form(form))
}

/// Reads and derives one discussion; `unknown_discussion` when absent.
pub(crate) fn load(ctx: &Context, discussion_id: &str) -> Result<(Discussion, i64)> {
    ids::check_server_id("discussion_id", ids::DISCUSSION, discussion_id)?;
    let discussion_id = &super::resolve_discussion(ctx, discussion_id)?;
    let view = ctx.ledger.view(&[discussion_id])?;
    let now = ctx.now(view.last_at_ms());
    let discussion =
        derive(discussion_id, &view.discussion(discussion_id), now).ok_or_else(|| {
            let err = unknown_discussion(discussion_id).detail("ledger", ctx.ledger.location());
            super::near_match(err, ctx, discussion_id)
        })?;
    Ok((discussion, now))
}
