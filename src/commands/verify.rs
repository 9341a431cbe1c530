//! `discuss verify`: replay the whole ledger and report what is wrong.

use super::Context;
use crate::discussion::FindingKind;
use crate::discussion::{Discussion, Status};
use crate::error::{Error, ErrorCode, Result};
use crate::ledger::LineCheck;
use crate::ledger::LineChecker;
use crate::operations::lists::{check_and_find_invalid, derive_all, newest_first};
use crate::output::SealHeld;
use crate::output::{Answer, VerifyView};
use crate::progress::Progress;
use crate::record::chain;
use crate::seal::{Seal, public_key_from};
use clap::Args;
use std::path::PathBuf;

// Replay the whole ledger: unreadable lines, a torn tail, findings about
// lines (a broken chain among them) and every invalid discussion. Exit 0
// only when there are none, else 7 with the report. With --seal, the
// sealed line must still be there with its digest (else seal_mismatch,
// exit 7).
//
// It reads every line, so it takes time in proportion to the ledger: about
// 1.5 s per million lines on a 2-core machine; on a terminal, with a
// progress bar once it has run for a second, it reads them twice (the
// lines, then the discussions).
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    discuss verify || discuss verify --json | jq .invalid_discussions\n  \
    discuss verify --seal seal.json --public-key seal.key.pub")]
pub(crate) struct VerifyArgs {
    /// A seal of `discuss ledger seal`: its line must still hold the
    /// digest it names
    #[arg(long, value_name = "FILE")]
    seal: Option<PathBuf>,
    /// The seal must be signed by this key (ed25519:HEX, or the file
    /// `ledger keygen` wrote it to)
    #[arg(long, value_name = "KEY", requires = "seal")]
    public_key: Option<String>,
}

pub(crate) fn run(ctx: &Context, args: &VerifyArgs) -> Result<Answer> {
    // A CI job pointed at the wrong path must not pass.
    ctx.ledger.require_existing()?;
    // The seal is read, and its signature checked, before the long read.
    let seal = match &args.seal {
        Some(path) => {
            let seal = Seal::read(path)?;
            let pinned = args
                .public_key
                .as_deref()
                .map(public_key_from)
                .transpose()?;
            let signed_by = seal.check_signature(pinned.as_ref())?;
            Some((seal, signed_by, pinned.is_some()))
        }
        None => None,
    };
    // Streamed: memory holds one discussion at a time, whatever the size
    // of the ledger.
    let now_ms = ctx.clock.now_ms();
    let mut checker =
        LineChecker::new(now_ms).digest_of_line(seal.as_ref().map(|(seal, ..)| seal.line));
    if seal.is_some() {
        checker = checker.whole_chain();
    }
    let (lines, derived) = if !Progress::shown(ctx.out.json) {
        // Nobody watches bars: each line is read once, checked and handed
        // to its discussion (a file; a database checks its rows on a
        // second core while this one derives).
        check_and_derive_all(ctx, checker)?
    } else {
        with_progress(ctx, checker)?
    };
    let sealed = seal
        .map(|(seal, signed_by, pinned)| held(&lines, seal, signed_by, pinned))
        .transpose()?;
    Ok(report(ctx, lines, derived, sealed))
}

/// What a seal vouched for, once the ledger was read: `seal_mismatch`
/// unless its line is there with its digest.
fn held(
    lines: &LineCheck,
    seal: Seal,
    signed_by: Option<String>,
    key_pinned: bool,
) -> Result<SealHeld> {
    let mismatch = |why: String| {
        Error::new(ErrorCode::SealMismatch, why)
            .detail("line", seal.line)
            .detail("sealed_sha256", seal.sha256.as_str())
    };
    let Some((line, digest)) = lines.digest_at else {
        return Err(mismatch(format!(
            "the seal names line {}, and the ledger has fewer lines: it was cut back below the seal",
            seal.line
        )));
    };
    if Some(digest) != seal.digest().ok() {
        return Err(mismatch(format!(
            "line {line} hashes to sha256:{}, not to the sealed sha256:{}: the history up to it was rewritten",
            chain::hex(&digest),
            seal.sha256
        )));
    }
    let sealed_chain = seal.chain_digest()?;
    if let Some(sealed_chain) = sealed_chain
        && lines.whole_chain_at != Some(sealed_chain)
    {
        return Err(mismatch(format!(
            "line {line} still hashes as sealed, but lines 1 to {line} do not: a line before it was edited, removed or inserted"
        ))
        .hint("discuss verify (without --seal) names the lines where the chain breaks, if it does"));
    }
    Ok(SealHeld {
        line,
        covers: if sealed_chain.is_some() {
            "every_line"
        } else {
            "its_line"
        },
        sha256: seal.sha256,
        at: seal.at,
        signed_by,
        key_pinned,
    })
}

/// The two passes a person watching a bar sees: the lines, then the
/// discussions.
fn with_progress(
    ctx: &Context,
    checker: LineChecker,
) -> Result<(LineCheck, (usize, Vec<Discussion>))> {
    let mut progress = Progress::new(ctx.out.json, 0, "verify: reading lines");
    let lines = ctx.ledger.check_lines(checker, |done, total| {
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
    Ok((lines, derived))
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
        Some(d.verify_reports().then(|| Box::new(d)))
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
    checker: LineChecker,
) -> Result<(LineCheck, (usize, Vec<Discussion>))> {
    let (lines, all) = check_and_find_invalid(ctx, checker)?;
    Ok((lines, invalid_of(all)))
}

fn report(
    ctx: &Context,
    lines: LineCheck,
    (discussions, invalid): (usize, Vec<Discussion>),
    seal: Option<SealHeld>,
) -> Answer {
    let mut lines = lines;
    // A decision of a request that was not pending decides nothing and
    // leaves its discussion valid: a finding of the ledger's lines.
    let (invalid, valid): (Vec<Discussion>, Vec<Discussion>) = invalid
        .into_iter()
        .partition(|d| d.status == Status::Invalid);
    for finding in valid.iter().flat_map(|d| &d.findings) {
        if finding.kind == FindingKind::ContradictoryApproval {
            lines.findings.push(crate::ledger::LineFinding {
                kind: finding.kind.as_str(),
                line: finding.line as u64,
                detail: finding.detail.clone(),
            });
        }
    }
    lines.findings.sort_by_key(|f| f.line);
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
        seal,
    })
}
