//! `discuss events [--follow]`: the ledger's records in order, one line
//! each, with the status of their discussion after each record: the seed's
//! event stream. Reading it never writes and never starts an agent.

use super::Context;
use crate::error::Result;
use crate::operations::events::{Event, EventStream};
use crate::output::{Answer, EventView, TimedEndView};
use clap::Args;
use std::time::Duration;

// The ledger's records in order, with each one's discussion status after
// it; --follow keeps watching, like `tail -f` (reading wakes nothing).
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  discuss events --discussion dsc_…\n  \
    discuss events --follow --agent agent-b --json | jq -c 'select(.receipt)'")]
pub(crate) struct EventsArgs {
    /// Keep watching and print records as they are written
    #[arg(long)]
    pub follow: bool,
    /// Only the records of this discussion
    #[arg(long, value_name = "DSC", add = clap_complete::ArgValueCompleter::new(crate::complete::discussions))]
    pub discussion: Option<String>,
    /// Only the records of discussions this agent takes part in
    #[arg(long, value_name = "A", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
    pub agent: Option<String>,
    /// Only records after this cursor (a record's `line`, as printed):
    /// resume a stream exactly where it stopped
    #[arg(long, value_name = "CURSOR", default_value_t = 0)]
    pub after: u64,
}

/// How often `--follow` looks for new lines.
const FOLLOW_POLL: Duration = Duration::from_millis(100);

pub(crate) fn run(ctx: &Context, args: &EventsArgs) -> Result<Answer> {
    if let Some(agent) = &args.agent {
        crate::ids::check_name("agent_id", agent)?;
    }
    let discussion = match &args.discussion {
        Some(id) => {
            crate::ids::check_server_id("discussion_id", crate::ids::DISCUSSION, id)?;
            Some(crate::operations::resolve_discussion(ctx, id)?)
        }
        None => None,
    };
    // A command holds many discussions (it runs alone); each of a server's
    // streams holds few (hundreds run side by side).
    let mut stream = EventStream::new(discussion, args.agent.clone(), None, args.after, 1 << 16);
    // Each record is printed as it is read (the first at once, the rest
    // through a buffer), and memory holds only the discussions that may
    // change.
    // After a cursor, from the operation that holds it, found through the
    // index: a resumed stream does not read the ledger before it.
    let from = ctx.ledger.position_of_line(args.after)?;
    let read_on = |stream: &mut EventStream, from| {
        ctx.out.items(|item| {
            let mut print = |event: &Event<'_>| item(&EventView::of(event));
            ctx.ledger.stream_records(from, |record, spent| {
                stream.record(ctx, record, spent, &mut print)
            })
        })
    };
    // A follower rides out a database that goes away even during its
    // first read: the stream skips what it printed when it reads again.
    let mut unreachable_since: Option<std::time::Instant> = None;
    let mut at = match read_on(&mut stream, from) {
        Ok(next) => next,
        Err(err) if args.follow && err.code == crate::error::ErrorCode::LedgerUnavailable => {
            ctx.out.note(&format!(
                "{}; retrying, and following once it answers",
                err.message
            ));
            unreachable_since = Some(std::time::Instant::now());
            from
        }
        Err(err) => return Err(err),
    };
    // A database gone between the first read and this look is ridden out
    // below, not a reason to stop.
    if !ctx.ledger.exists().unwrap_or(true) {
        // An empty stream from a wrong path must not look like a quiet one.
        let waiting = if args.follow {
            "; waiting for it to be created"
        } else {
            ""
        };
        ctx.out.note(&format!(
            "there is no ledger at {} yet{waiting}",
            ctx.ledger.location()
        ));
    }
    if !args.follow {
        return Ok(Answer::streamed(0));
    }
    // A database that restarts is waited for: the stream carries on from
    // its position once it answers again.
    loop {
        let pause = match unreachable_since {
            Some(since) => FOLLOW_RETRY.min(FOLLOW_POLL * (1 + since.elapsed().as_secs() as u32)),
            None => FOLLOW_POLL,
        };
        std::thread::sleep(pause);
        let read = read_on(&mut stream, at).and_then(|next| {
            // A discussion shown that ended by time alone has no record:
            // the stream tells it, once, within a poll of its deadline.
            if stream.next_due().is_some_and(|due| due <= ctx.now(None)) {
                let now = ctx.now(None);
                ctx.out
                    .items(|item| stream.overdue(ctx, now, &mut |end| item(&TimedEndView(end))))?;
            }
            Ok(next)
        });
        match read {
            Ok(next) => {
                if unreachable_since.take().is_some() {
                    ctx.out.note(&format!(
                        "the ledger answers again; following from line {}",
                        at.1 + 1
                    ));
                }
                at = next;
            }
            Err(err) if err.code == crate::error::ErrorCode::LedgerUnavailable => {
                if unreachable_since.is_none() {
                    ctx.out.note(&format!(
                        "{}; retrying, and following from line {} once it answers",
                        err.message,
                        at.1 + 1
                    ));
                    unreachable_since = Some(std::time::Instant::now());
                }
            }
            Err(err) => return Err(err),
        }
    }
}

/// The longest pause between tries while the ledger cannot be reached.
const FOLLOW_RETRY: Duration = Duration::from_secs(2);
