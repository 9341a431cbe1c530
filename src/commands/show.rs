//! `discuss show`: the seed's `get_discussion`.

use super::Context;
use crate::error::Result;
use crate::output::{Answer, DiscussionView, Form};
use clap::Args;

// Show the derived state of a discussion: status, transcript, attempts,
// escalation and integrity findings.
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

pub(crate) fn run(ctx: &Context, args: &ShowArgs) -> Result<Answer> {
    let (discussion, now_ms, halted) =
        crate::operations::read::load_with_halt(ctx, &args.discussion)?;
    let form = match args.format {
        ShowFormat::Human => Form::Usual,
        ShowFormat::Markdown => Form::Markdown,
    };
    Ok(Answer::new(DiscussionView {
        discussion,
        now_ms,
        receipts: !args.no_receipts,
        halted,
    })
    .form(form))
}
