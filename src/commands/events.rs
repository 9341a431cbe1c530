//! `discuss events [--follow]`: the ledger's records in order, one line
//! each, with the status of their discussion after each record: the seed's
//! event stream. Reading it never writes and never starts an agent.

use super::Context;
use crate::discussion::{Status, derive};
use crate::error::Result;
use crate::ledger::Record;
use crate::output::{Answer, EventView};
use clap::Args;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::time::Duration;

/// The ledger's records in order, with each one's discussion status after
/// it; --follow keeps watching, like `tail -f` (reading wakes nothing).
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
    let mut stream = Stream {
        ctx,
        discussion,
        agent: args.agent.clone(),
        open: HashMap::new(),
        settles: BinaryHeap::new(),
        seen: HashSet::new(),
        through: usize::try_from(args.after).unwrap_or(usize::MAX),
        resumed: args.after > 0,
    };
    // Each record is printed as it is read: the first lines come at once,
    // and memory holds only the discussions that may change.
    let mut at = ctx
        .ledger
        .stream_records((0, 0), |record| stream.record(record))?;
    if !ctx.ledger.exists()? {
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
    let mut unreachable_since: Option<std::time::Instant> = None;
    loop {
        let pause = match unreachable_since {
            Some(since) => FOLLOW_RETRY.min(FOLLOW_POLL * (1 + since.elapsed().as_secs() as u32)),
            None => FOLLOW_POLL,
        };
        std::thread::sleep(pause);
        match ctx
            .ledger
            .stream_records(at, |record| stream.record(record))
        {
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

/// What the stream remembers: the records of discussions that may still
/// change, to derive each one's status after each record.
struct Stream<'a> {
    ctx: &'a Context,
    discussion: Option<String>,
    agent: Option<String>,
    open: HashMap<String, Vec<Record>>,
    /// When each discussion in `open` is terminal whatever comes: its
    /// conversation deadline, soonest first. Past it in the stream's time,
    /// its records are let go (a later line reads them back).
    settles: BinaryHeap<Reverse<(i64, String)>>,
    /// Every discussion held so far: one not among them has no records
    /// before this one (the stream starts at the first line).
    seen: HashSet<String>,
    /// The last line handled: a batch cut short by a lost database is
    /// read again from its start, and nothing is printed twice.
    through: usize,
    /// Started after a cursor: a discussion first met may have records
    /// before it, read from the ledger for its status.
    resumed: bool,
}

impl Stream<'_> {
    fn record(&mut self, record: Record) -> Result<()> {
        if record.line <= self.through {
            return Ok(());
        }
        let line = record.line;
        self.handle(record)?;
        self.through = line;
        Ok(())
    }

    fn handle(&mut self, record: Record) -> Result<()> {
        let Some(id) = record.discussion_id().map(str::to_owned) else {
            if self.discussion.is_none() && self.agent.is_none() {
                self.print(&record, None)?;
            }
            return Ok(());
        };
        if self.discussion.as_ref().is_some_and(|d| *d != id) {
            return Ok(());
        }
        // Let go of what is settled by now, in the stream's time.
        while let Some(Reverse((at, _))) = self.settles.peek()
            && *at <= record.at_ms
        {
            let Some(Reverse((_, settled))) = self.settles.pop() else {
                break;
            };
            self.open.remove(&settled);
        }
        let fresh = !self.open.contains_key(&id);
        if fresh {
            // Let go earlier: what came before, from the ledger.
            let before: Vec<Record> = if self.seen.insert(id.clone()) && !self.resumed {
                Vec::new()
            } else {
                let line = record.line;
                let view = self.ctx.ledger.view(&[&id])?;
                view.discussion(&id)
                    .into_iter()
                    .filter(|r| r.line < line)
                    .cloned()
                    .collect()
            };
            self.open.insert(id.clone(), before);
        }
        let records = self.open.get_mut(&id).expect("just inserted");
        records.push(record);
        let refs: Vec<&Record> = records.iter().collect();
        let at = refs.last().expect("one record").at_ms;
        let state = derive(&id, &refs, at);
        if fresh {
            // Newly held: settled by its conversation deadline (every
            // attempt's is within it), or at once without a root.
            let settles = state
                .as_ref()
                .and_then(|d| d.root.as_ref())
                .map_or(at, |r| r.deadline_ms);
            self.settles.push(Reverse((settles, id.clone())));
        }
        if let Some(agent) = &self.agent {
            let takes_part = state
                .as_ref()
                .and_then(|d| d.root.as_ref())
                .is_some_and(|r| r.asker == *agent || r.peer == *agent);
            if !takes_part {
                return Ok(());
            }
        }
        let status = state.as_ref().map(|d| d.status);
        let printed = records.last().expect("one record").clone();
        self.print(&printed, status)
    }

    fn print(&self, record: &Record, status: Option<Status>) -> Result<()> {
        self.ctx.out.item(&EventView::of(record, status))
    }
}
