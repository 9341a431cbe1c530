//! What `verify` checks line by line, for any kind of ledger: whole
//! operations, duplicate ids, time that runs backwards or far ahead.

use super::lines::{LineFeed, OperationFinding, Streamed, operations_of};
use crate::record::chain::{self, Digest, Prev};
use crate::record::{Body, OpMark, Record};
use sha2::{Digest as _, Sha256};
use std::io;

/// A line that is kept in the ledger but is not a record.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct UnreadableLine {
    pub line: usize,
    pub detail: String,
}

/// What `check_lines` finds.
#[derive(Debug, Default, Clone)]
pub(crate) struct LineCheck {
    pub records: u64,
    /// The bytes of the complete lines checked.
    pub bytes: u64,
    pub unreadable: Vec<UnreadableLine>,
    pub torn_tail: u64,
    /// Lines that are records but do not fit the ledger around them, in
    /// line order: `operation_overrun`, `operation_stray_line`,
    /// `duplicate_id`, `time_backwards`, `clock_skew`, `chain_broken`.
    pub findings: Vec<LineFinding>,
    pub chain: ChainSummary,
    /// The digest of the line `LineChecker::digest_of_line` asked for
    /// (`verify --seal`), when the ledger has it.
    pub digest_at: Option<(u64, Digest)>,
    /// With `LineChecker::whole_chain`: the digest of every line's digest
    /// in order, up to the line of `digest_at`, and up to the last line.
    pub whole_chain_at: Option<Digest>,
    pub whole_chain: Option<Digest>,
}

/// What `verify` says of the chain.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct ChainSummary {
    /// Lines that name the line before them (`prev`).
    pub lines_chained: u64,
    pub first_chained_line: Option<u64>,
    /// The last line, and its digest (hex): what a seal of the ledger now
    /// would name.
    pub last_line: Option<u64>,
    pub last_sha256: Option<String>,
    /// The lines an import appended after a `kind:"import"` line, whose
    /// chain starts again there (not counted as broken).
    pub imported_restarts: u64,
}

/// A line's own digest and what it names before it: read beside the
/// record, on whichever core parses the line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Link {
    digest: Digest,
    prev: Prev,
}

impl Link {
    pub(crate) fn of(line: &[u8]) -> Link {
        Link {
            digest: chain::digest_of(line),
            prev: chain::prev_of(line),
        }
    }
}

/// The chain followed line by line (`LineChecker`).
#[derive(Clone)]
struct ChainCheck {
    /// The digest of the last line seen (of no bytes before line 1).
    last: Digest,
    last_line: u64,
    summary: ChainSummary,
    /// Within the lines an import appended: what its line excuses.
    imported: Option<Excused>,
    findings: Vec<LineFinding>,
    wanted: Option<u64>,
    digest_at: Option<(u64, Digest)>,
    /// The digests of every line so far, hashed in order (`whole_chain`):
    /// what a seal holds, so that it covers every line up to its own,
    /// whatever an import line excuses.
    whole: Option<Sha256>,
    whole_at: Option<Digest>,
}

/// The lines after a `kind:"import"` line: which comes next, how many
/// there are, where their chain starts again and what each restart names.
#[derive(Clone)]
struct Excused {
    mark_line: u64,
    next: u64,
    lines: u64,
    /// (position, the prev it was imported with; `None`: the mark names none).
    restarts: Vec<(u64, Option<Option<Digest>>)>,
}

impl Excused {
    fn of(mark_line: u64, mark: &crate::record::ImportMark) -> Excused {
        let mut positions: Vec<u64> = std::iter::once(0)
            .chain(mark.chain_restarts.iter().copied())
            .collect();
        positions.sort_unstable();
        positions.dedup();
        // One prev a position, in order; a mark that names them otherwise
        // names none.
        let prevs = mark
            .restart_prevs
            .as_ref()
            .filter(|prevs| prevs.len() == positions.len());
        let restarts = match prevs {
            Some(prevs) => positions
                .into_iter()
                .zip(prevs.iter().map(|named| {
                    Some(named.as_ref().map(|hex| {
                        // What no line can name: a malformed prev matches nothing.
                        chain::parse_hex(hex.as_bytes()).unwrap_or([0xff; 32])
                    }))
                }))
                .collect(),
            None => positions.into_iter().map(|at| (at, None)).collect(),
        };
        Excused {
            mark_line,
            next: 0,
            lines: mark.lines,
            restarts,
        }
    }

    /// The next imported line: whether the mark excuses its `prev`, and
    /// if it is a restart the mark names otherwise, why not.
    fn take(&mut self, prev: Prev) -> Option<Result<(), String>> {
        let at = self.next;
        self.next += 1;
        let index = self
            .restarts
            .binary_search_by_key(&at, |(at, _)| *at)
            .ok()?;
        let named = match prev {
            Prev::Names(digest) => Some(digest),
            Prev::Unchained => None,
            Prev::Malformed => return None,
        };
        Some(match self.restarts[index].1 {
            Some(excused) if excused == named => Ok(()),
            Some(_) => Err(format!(
                "the import line at line {} excuses another prev here: this line is not the one it imported",
                self.mark_line
            )),
            None => Err(format!(
                "the import line at line {} names no prev it excuses (restart_prevs), so it excuses none",
                self.mark_line
            )),
        })
    }
}

impl ChainCheck {
    fn new() -> ChainCheck {
        ChainCheck {
            last: chain::before_first_line(),
            last_line: 0,
            summary: ChainSummary::default(),
            imported: None,
            findings: Vec::new(),
            wanted: None,
            digest_at: None,
            whole: None,
            whole_at: None,
        }
    }

    fn line(&mut self, line_no: u64, link: &Link, record: Option<&Record>) {
        let excuse = match &mut self.imported {
            Some(excused) => {
                let excuse = excused.take(link.prev);
                if excused.next >= excused.lines {
                    self.imported = None;
                }
                excuse
            }
            None => None,
        };
        let restarts = matches!(excuse, Some(Ok(())));
        if let Some(Err(why)) = &excuse {
            self.findings.push(LineFinding {
                kind: "chain_broken",
                line: line_no,
                detail: why.clone(),
            });
        }
        if !matches!(link.prev, Prev::Unchained) {
            self.summary.lines_chained += 1;
            self.summary.first_chained_line.get_or_insert(line_no);
        }
        let named = match link.prev {
            Prev::Unchained => None,
            Prev::Names(digest) => Some(digest),
            Prev::Malformed => Some([0; 32]),
        };
        match named {
            Some(_) if restarts => self.summary.imported_restarts += 1,
            Some(named) if named != self.last && excuse.is_none() => self.findings.push(LineFinding {
                kind: "chain_broken",
                line: line_no,
                detail: match (link.prev, self.last_line) {
                    (Prev::Malformed, _) => {
                        "its prev is not \"sha256:\" and 64 lowercase hex digits".to_owned()
                    }
                    (_, 0) => format!(
                        "its prev names sha256:{}, but it is the first line: lines before it were removed",
                        chain::hex(&named)
                    ),
                    (_, before) => format!(
                        "its prev names sha256:{} where line {before} hashes to sha256:{}: line {before} was edited, or lines were removed, inserted or moved here",
                        chain::hex(&named),
                        chain::hex(&self.last)
                    ),
                },
            }),
            _ => {}
        }
        if let Some(Record {
            body: Body::Import(mark),
            ..
        }) = record
            && mark.lines > 0
        {
            self.imported = Some(Excused::of(line_no, mark));
        }
        self.last = link.digest;
        self.last_line = line_no;
        if let Some(whole) = &mut self.whole {
            whole.update(link.digest);
        }
        if self.wanted == Some(line_no) {
            self.digest_at = Some((line_no, link.digest));
            self.whole_at = self.whole.clone().map(|whole| whole.finalize().into());
        }
    }

    fn finish(mut self, check: &mut LineCheck) {
        if self.last_line > 0 {
            self.summary.last_line = Some(self.last_line);
            self.summary.last_sha256 = Some(chain::hex(&self.last));
        }
        check.chain = self.summary;
        check.digest_at = self.digest_at;
        check.whole_chain_at = self.whole_at;
        check.whole_chain = self.whole.map(|whole| whole.finalize().into());
        check.findings.append(&mut self.findings);
    }
}

/// A finding about one line of the ledger rather than one discussion.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct LineFinding {
    pub kind: &'static str,
    pub line: u64,
    pub detail: String,
}

impl From<OperationFinding> for LineFinding {
    fn from(f: OperationFinding) -> Self {
        LineFinding {
            kind: f.kind,
            line: f.line,
            detail: f.detail,
        }
    }
}

/// Checks the lines `feed` gives with `checker` (`feed` is called twice: a
/// second pass confirms the few ids that repeat). `len` is the ledger's
/// size in bytes: what follows its whole operations is a torn tail;
/// `progress` hears (bytes read, `len`) now and then.
pub(super) fn check_lines(
    mut feed: impl FnMut(&mut LineFeed<'_>) -> io::Result<(u64, u64)>,
    len: u64,
    mut checker: LineChecker,
    mut progress: impl FnMut(u64, u64),
) -> io::Result<LineCheck> {
    let streamed = operations_of(
        &mut feed,
        |start, line_no, line| {
            if line_no % 4096 == 0 {
                progress(start, len);
            }
            let (record, mark) = record_or_unreadable(line_no, line);
            ((record, Link::of(line)), mark)
        },
        |(line, link)| checker.line(&line, &link),
    )?;
    checker.finish(streamed, len, feed)
}

/// `bytes` checked as a ledger: the lines `chain_broken` is found at, and
/// how many bytes are a torn tail (the fuzz target's chained edits).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn chain_breaks(bytes: &[u8]) -> (Vec<u64>, u64) {
    let feed = |line: &mut LineFeed<'_>| super::lines::lines_in_memory(bytes, line);
    let check = check_lines(feed, bytes.len() as u64, LineChecker::new(0), |_, _| {})
        .expect("bytes in memory");
    let breaks = check
        .findings
        .iter()
        .filter(|f| f.kind == "chain_broken")
        .map(|f| f.line)
        .collect();
    (breaks, check.torn_tail)
}

/// A line read as a record, or why it is not one, and what it says of
/// its operation: the `read` of the passes that check lines.
pub(crate) fn record_or_unreadable(
    line_no: u64,
    line: &[u8],
) -> (Result<Record, UnreadableLine>, OpMark) {
    match Record::parse_with_mark(line, line_no as usize) {
        Ok((record, mark)) => (Ok(record), mark),
        Err(detail) => (
            Err(UnreadableLine {
                line: line_no as usize,
                detail,
            }),
            OpMark::Alone,
        ),
    }
}

/// What `verify` checks of the lines, a line at a time, in ledger order:
/// `check_lines` feeds it, and so does a pass that also derives the
/// discussions from the same lines (`FileLedger::check_and_map`).
#[derive(Clone)]
pub(crate) struct LineChecker {
    check: LineCheck,
    /// Ids are remembered as hashes, to keep memory small; a second pass
    /// over the ledger confirms the few that repeat.
    id_hashes: Vec<u64>,
    newest: Option<i64>,
    time_findings: Vec<LineFinding>,
    now_ms: i64,
    chain: ChainCheck,
    /// The lines are a database's rows: complete lines only, however many
    /// bytes its state row counts.
    rows: bool,
}

impl LineChecker {
    pub(crate) fn new(now_ms: i64) -> LineChecker {
        LineChecker {
            check: LineCheck::default(),
            id_hashes: Vec::new(),
            newest: None,
            time_findings: Vec::new(),
            now_ms,
            chain: ChainCheck::new(),
            rows: false,
        }
    }

    /// For a database's rows (`rows`).
    pub(crate) fn of_rows(mut self) -> LineChecker {
        self.rows = true;
        self
    }

    /// Keeps the digest of line `line` on the way (`LineCheck::digest_at`).
    pub(crate) fn digest_of_line(mut self, line: Option<u64>) -> LineChecker {
        self.chain.wanted = line;
        self
    }

    /// Hashes every line's digest in order, for a seal
    /// (`LineCheck::whole_chain`).
    pub(crate) fn whole_chain(mut self) -> LineChecker {
        self.chain.whole = Some(Sha256::new());
        self
    }

    /// The next line of a whole operation, and its link in the chain.
    pub(crate) fn line(&mut self, line: &Result<Record, UnreadableLine>, link: &Link) {
        let line_no = match line {
            Ok(record) => record.line as u64,
            Err(unreadable) => unreadable.line as u64,
        };
        self.chain.line(line_no, link, line.as_ref().ok());
        match line {
            Ok(record) => {
                self.check.records += 1;
                self.id_hashes
                    .push(super::hash::hash64(record.id.as_bytes()));
                let line_no = record.line as u64;
                let found = time_finding(line_no, record.at_ms, &mut self.newest, self.now_ms);
                self.time_findings.extend(found);
            }
            Err(unreadable) => self.check.unreadable.push(unreadable.clone()),
        }
    }

    /// What was found, once every line went by: `streamed` tells where the
    /// whole operations end in a ledger of `len` bytes; `feed` gives the
    /// lines again for the ids that may repeat.
    pub(crate) fn finish(
        mut self,
        streamed: Streamed,
        len: u64,
        feed: impl FnOnce(&mut LineFeed<'_>) -> io::Result<(u64, u64)>,
    ) -> io::Result<LineCheck> {
        // What follows the last whole operation: of a file's `len` bytes,
        // of a database's rows (whose state row may count other bytes than
        // rows edited by hand now hold).
        let len = if self.rows { streamed.lines_end } else { len };
        self.check.torn_tail = len.max(streamed.lines_end) - streamed.end;
        self.check.bytes = streamed.lines_end;
        self.check.findings = streamed
            .findings
            .into_iter()
            .map(LineFinding::from)
            .collect();
        self.check.findings.extend(self.time_findings);
        self.chain.finish(&mut self.check);
        self.check
            .findings
            .extend(duplicate_ids(feed, self.id_hashes)?);
        self.check.findings.sort_by_key(|f| f.line);
        Ok(self.check)
    }
}

/// `clock_skew` for a record more than the allowed skew ahead of `now_ms`;
/// `time_backwards` for one more than that behind the newest record before
/// it that is not itself ahead.
fn time_finding(
    line: u64,
    at_ms: i64,
    newest: &mut Option<i64>,
    now_ms: i64,
) -> Option<LineFinding> {
    let skew = crate::clock::MAX_SKEW_MS;
    if at_ms > now_ms.saturating_add(skew) {
        return Some(LineFinding {
            kind: "clock_skew",
            line,
            detail: format!(
                "stamped {}, more than {} s ahead of this clock ({})",
                crate::clock::format_ms(at_ms),
                skew / 1000,
                crate::clock::format_ms(now_ms)
            ),
        });
    }
    let finding = newest
        .filter(|&newest| at_ms < newest.saturating_sub(skew))
        .map(|newest| LineFinding {
            kind: "time_backwards",
            line,
            detail: format!(
                "stamped {}, {} ms before an earlier record ({})",
                crate::clock::format_ms(at_ms),
                // i128: any two i64 stamps (the fuzzer found i64 overflow).
                i128::from(newest) - i128::from(at_ms),
                crate::clock::format_ms(newest)
            ),
        });
    *newest = Some(newest.map_or(at_ms, |n| n.max(at_ms)));
    finding
}

/// `duplicate_id` for every record whose id an earlier record has: the
/// hashes that repeat are read again to compare the ids themselves.
fn duplicate_ids(
    feed: impl FnOnce(&mut LineFeed<'_>) -> io::Result<(u64, u64)>,
    mut hashes: Vec<u64>,
) -> io::Result<Vec<LineFinding>> {
    hashes.sort_unstable();
    let repeated: std::collections::HashSet<u64> = hashes
        .windows(2)
        .filter(|pair| pair[0] == pair[1])
        .map(|pair| pair[0])
        .collect();
    drop(hashes);
    if repeated.is_empty() {
        return Ok(Vec::new());
    }
    let mut first_line: std::collections::HashMap<String, u64> = Default::default();
    let mut findings = Vec::new();
    operations_of(
        feed,
        |_, line_no, line| match Record::parse_with_mark(line, line_no as usize) {
            Ok((record, mark)) => (Some((line_no, record.id)), mark),
            Err(_) => (None, OpMark::Alone),
        },
        |line| {
            let Some((line_no, id)) = line else { return };
            if !repeated.contains(&super::hash::hash64(id.as_bytes())) {
                return;
            }
            match first_line.get(&id) {
                Some(&first) => findings.push(LineFinding {
                    kind: "duplicate_id",
                    line: line_no,
                    detail: format!("record id {id} is already on line {first}"),
                }),
                None => {
                    first_line.insert(id, line_no);
                }
            }
        },
    )?;
    Ok(findings)
}
