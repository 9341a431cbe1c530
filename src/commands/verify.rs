//! `discuss verify`: replay the whole ledger and report what is wrong.

use super::Context;
use crate::discussion::{Discussion, Status};
use crate::error::Result;
use crate::ledger::LineCheck;
use crate::operations::lists::{check_and_find_invalid, derive_all, newest_first};
use crate::output::{Answer, VerifyView};
use crate::progress::Progress;
use clap::Args;

/// Replay the whole ledger: unreadable lines, a torn tail, findings about
/// lines and every invalid discussion. Exit 0 only when there are none,
/// else 7 with the report.
///
/// It reads every line, so it takes time in proportion to the ledger: about
/// 1.5 s per million lines on a 2-core machine; on a terminal, with a
/// progress bar once it has run for a second, it reads them twice (the
/// lines, then the discussions).
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss verify || discuss verify --json | jq .invalid_discussions"
)]
pub(crate) struct VerifyArgs {}

pub(crate) fn run(ctx: &Context, _args: &VerifyArgs) -> Result<Answer> {
    // A CI job pointed at the wrong path must not pass.
    ctx.ledger.require_existing()?;
    // Streamed: memory holds one discussion at a time, whatever the size
    // of the ledger.
    let now_ms = ctx.clock.now_ms();
    if !Progress::shown(ctx.out.json) {
        // Nobody watches bars: each line is read once, checked and handed
        // to its discussion (a file; a database checks its rows on a
        // second core while this one derives).
        let (lines, derived) = check_and_derive_all(ctx, now_ms)?;
        return Ok(report(ctx, lines, derived));
    }
    let mut progress = Progress::new(ctx.out.json, 0, "verify: reading lines");
    let lines = ctx.ledger.check_lines(now_ms, |done, total| {
        progress.set_total(total);
        progress.at(done);
    })?;
    progress.done();
    // Counting the discussions costs a read of the index's ids: only for
    // a bar someone sees.
    let total = if Progress::shown(ctx.out.json) {
        ctx.ledger.discussion_ids()?.len() as u64
    } else {
        0
    };
    let mut progress = Progress::new(ctx.out.json, total, "verify: deriving discussions");
    let derived = invalid_discussions(ctx, |derived| progress.at(derived))?;
    progress.done();
    Ok(report(ctx, lines, derived))
}

/// How many discussions there are, and the invalid ones, newest first;
/// `progress` hears how many are derived so far.
fn invalid_discussions(
    ctx: &Context,
    mut progress: impl FnMut(u64),
) -> Result<(usize, Vec<Discussion>)> {
    let mut derived = 0;
    let (all, _) = derive_all(ctx, |d| {
        derived += 1;
        progress(derived);
        Some((d.status == Status::Invalid).then(|| Box::new(d)))
    })?;
    Ok(invalid_of(all))
}

/// How many discussions were derived, and the invalid ones among them,
/// newest first.
fn invalid_of(all: Vec<Option<Box<Discussion>>>) -> (usize, Vec<Discussion>) {
    let discussions = all.len();
    let mut invalid: Vec<Discussion> = all.into_iter().flatten().map(|d| *d).collect();
    invalid.sort_by(|a, b| newest_first((a.updated_at_ms, &a.id), (b.updated_at_ms, &b.id)));
    (discussions, invalid)
}

/// The lines checked, and how many discussions there are with the
/// invalid ones, newest first, from one read of the ledger.
fn check_and_derive_all(
    ctx: &Context,
    now_ms: i64,
) -> Result<(LineCheck, (usize, Vec<Discussion>))> {
    let (lines, all) = check_and_find_invalid(ctx, now_ms)?;
    Ok((lines, invalid_of(all)))
}

fn report(
    ctx: &Context,
    lines: LineCheck,
    (discussions, invalid): (usize, Vec<Discussion>),
) -> Answer {
    let ok = lines.unreadable.is_empty()
        && lines.torn_tail == 0
        && lines.findings.is_empty()
        && invalid.is_empty();
    Answer::new(VerifyView {
        ok,
        ledger: ctx.ledger.location(),
        torn_moves_to: ctx
            .ledger
            .as_file()
            .map(|file| file.torn_path().display().to_string()),
        lines,
        discussions,
        invalid,
    })
}
