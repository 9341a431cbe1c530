//! `discuss wait`: poll until a discussion reaches one of some statuses.

use super::Context;
use crate::discussion::derive;
use crate::engine::unknown_discussion;
use crate::error::{Error, ErrorCode, Result};
use crate::ids;
use crate::operations::lists::parse_statuses;
use crate::operations::watch::{Changes, every};
use crate::output::{Answer, DiscussionView, Reached};
use clap::Args;
use std::time::{Duration, Instant};

// Poll the ledger (waking nothing) until the discussion's status is one of
// those given; exit 10 (wait_timeout) when the timeout passes first.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss wait dsc_… --until closed,exhausted --timeout-ms 60000"
)]
pub(crate) struct WaitArgs {
    /// The discussion
    #[arg(value_name = "DSC", add = clap_complete::ArgValueCompleter::new(crate::complete::discussions))]
    pub discussion: String,
    /// Statuses to wait for (comma-separated; `terminal` for any terminal one)
    #[arg(
        long,
        value_name = "STATUS[,STATUS...]",
        value_delimiter = ',',
        required = true,
        add = clap_complete::ArgValueCompleter::new(crate::complete::statuses)
    )]
    pub until: Vec<String>,
    /// Give up after this many ms (default: wait as long as it takes)
    #[arg(long, value_name = "N")]
    pub timeout_ms: Option<u64>,
}

/// Often enough to notice a reply promptly, rarely enough to cost nothing.
const POLL: Duration = Duration::from_millis(50);

pub(crate) fn run(ctx: &Context, args: &WaitArgs) -> Result<Answer> {
    ids::check_server_id("discussion_id", ids::DISCUSSION, &args.discussion)?;
    let discussion_id = crate::operations::resolve_discussion(ctx, &args.discussion)?;
    let wanted = parse_statuses(&args.until)?;
    let started = Instant::now();
    let until = args.timeout_ms.map(|t| started + Duration::from_millis(t));
    // A writer holding the lock never stretches the timeout: the lock is
    // waited for only until the timeout, which then ends the wait.
    let read = || -> Result<Option<crate::ledger::Excerpt>> {
        match until {
            Some(until) => ctx.ledger.view_within(&[&discussion_id], until),
            None => ctx.ledger.view(&[&discussion_id]).map(Some),
        }
    };
    let timed_out = |status: Option<&str>| {
        let mut err = Error::new(
            ErrorCode::WaitTimeout,
            format!(
                "{} is still {} after {} ms",
                discussion_id,
                status.unwrap_or("unread (the ledger stayed locked)"),
                args.timeout_ms.unwrap_or(0)
            ),
        );
        if let Some(status) = status {
            err = err.detail("status", status);
        }
        err
    };
    let mut changes = Changes::from_now(ctx);
    let mut view = read()?.ok_or_else(|| timed_out(None))?;
    every(POLL, || {
        if let Some(version) = changes.fresh(ctx) {
            match read()? {
                Some(fresh) => {
                    view = fresh;
                    changes.seen(version);
                }
                None => {
                    let status = derive(
                        &discussion_id,
                        &view.discussion(&discussion_id),
                        ctx.now(view.last_at_ms()),
                    )
                    .map(|d| d.status.as_str());
                    return Err(timed_out(status));
                }
            }
        }
        let now = ctx.now(view.last_at_ms());
        let discussion =
            derive(&discussion_id, &view.discussion(&discussion_id), now).ok_or_else(|| {
                let err = unknown_discussion(&discussion_id);
                crate::operations::near_match(err, ctx, &discussion_id)
            })?;
        if wanted.contains(&discussion.status) {
            return Ok(Some(Answer::new(Reached(DiscussionView {
                discussion,
                now_ms: now,
                receipts: true,
                halted: None,
            }))));
        }
        let status = discussion.status;
        if !status.may_become(&wanted) {
            return Err(Error::new(
                ErrorCode::StatusUnreachable,
                format!(
                    "{} is {}, a terminal status, and will never be {}",
                    discussion.id,
                    status.as_str(),
                    wanted
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            )
            .detail("status", status.as_str())
            .hint("terminal statuses never change; `discuss show` tells how it ended"));
        }
        if args
            .timeout_ms
            .is_some_and(|t| started.elapsed() >= Duration::from_millis(t))
        {
            return Err(timed_out(Some(discussion.status.as_str())));
        }
        Ok(None)
    })
}
