//! What `verify` checks line by line, for any kind of ledger: whole
//! operations, duplicate ids, time that runs backwards or far ahead.

use super::lines::{LineFeed, OperationFinding, Streamed, operations_of};
use super::snapshot::UnreadableLine;
use crate::record::{OpMark, Record};
use std::io;

/// What `check_lines` finds.
#[derive(Debug, Default)]
pub(crate) struct LineCheck {
    pub records: u64,
    pub unreadable: Vec<UnreadableLine>,
    pub torn_tail: u64,
    /// Lines that are records but do not fit the ledger around them, in
    /// line order: `operation_overrun`, `operation_stray_line`,
    /// `duplicate_id`, `time_backwards`, `clock_skew`.
    pub findings: Vec<LineFinding>,
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

/// Checks the lines `feed` gives (it is called twice: a second pass
/// confirms the few ids that repeat). `len` is the ledger's size in bytes:
/// what follows its whole operations is a torn tail; `progress` hears
/// (bytes read, `len`) now and then.
pub(super) fn check_lines(
    mut feed: impl FnMut(&mut LineFeed<'_>) -> io::Result<(u64, u64)>,
    len: u64,
    now_ms: i64,
    mut progress: impl FnMut(u64, u64),
) -> io::Result<LineCheck> {
    let mut checker = LineChecker::new(now_ms);
    let streamed = operations_of(
        &mut feed,
        |start, line_no, line| {
            if line_no % 4096 == 0 {
                progress(start, len);
            }
            record_or_unreadable(line_no, line)
        },
        |line| checker.line(&line),
    )?;
    checker.finish(streamed, len, feed)
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
pub(crate) struct LineChecker {
    check: LineCheck,
    /// Ids are remembered as hashes, to keep memory small; a second pass
    /// over the ledger confirms the few that repeat.
    id_hashes: Vec<u64>,
    newest: Option<i64>,
    time_findings: Vec<LineFinding>,
    now_ms: i64,
}

impl LineChecker {
    pub(crate) fn new(now_ms: i64) -> LineChecker {
        LineChecker {
            check: LineCheck::default(),
            id_hashes: Vec::new(),
            newest: None,
            time_findings: Vec::new(),
            now_ms,
        }
    }

    /// The next line of a whole operation.
    pub(crate) fn line(&mut self, line: &Result<Record, UnreadableLine>) {
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
        self.check.torn_tail = len - streamed.end;
        self.check.findings = streamed
            .findings
            .into_iter()
            .map(LineFinding::from)
            .collect();
        self.check.findings.extend(self.time_findings);
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
