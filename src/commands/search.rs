//! `discuss search TEXT`: the messages whose body holds every word (and
//! "phrase") of TEXT, newest first, with a snippet.

use super::Context;
use crate::error::Result;
use crate::output::Answer;
use crate::search::run::{SearchRequest, search};
use crate::search::view::SearchView;
use clap::Args;

// Find what agents said: messages whose body holds every word of TEXT
// ("a phrase" in double quotes: adjacent words in order), newest first.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  discuss search auth refactor\n  \
    discuss search '\"token refresh\" expiry' --status closed --limit 5")]
pub(crate) struct SearchArgs {
    /// The words to find (every one must be there)
    #[arg(value_name = "TEXT", required = true)]
    pub text: Vec<String>,
    /// Only discussions of this fleet
    #[arg(long, value_name = "FLEET", add = clap_complete::ArgValueCandidates::new(crate::complete::fleets))]
    pub fleet: Option<String>,
    /// Only discussions this agent takes part in
    #[arg(long, value_name = "AGENT", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
    pub agent: Option<String>,
    /// Only discussions in this status (repeatable; `terminal` for any
    /// terminal one)
    #[arg(long, value_name = "STATUS", add = clap_complete::ArgValueCompleter::new(crate::complete::statuses))]
    pub status: Vec<String>,
    /// At most this many matches (1..1000)
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: i64,
    #[command(flatten)]
    pub quiet: super::QuietArgs,
}

pub(crate) fn run(ctx: &Context, args: &SearchArgs) -> Result<Answer> {
    let request = SearchRequest::new(
        &args.text.join(" "),
        args.fleet.clone(),
        args.agent.clone(),
        &args.status,
        Some(args.limit),
    )?;
    let (found, now_ms) = search(ctx, &request)?;
    Ok(Answer::new(SearchView { found, now_ms }).quiet(args.quiet.quiet))
}
