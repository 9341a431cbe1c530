//! Mapping many discussions (`list`, `verify`, the live set), written once
//! above the backends: which discussions to derive, which to answer from
//! the kept summary rows, and when to summarize every discussion anew.
//! A backend offers the few primitives below (`Discussions`), inside one
//! consistent read: a file under its shared lock, a database snapshot.

use super::check::{LineCheck, LineChecker};
use super::summary::{Summarize, SummaryLine, Untrusted};
use crate::record::Record;

/// A function that maps a discussion: the newest `at_ms` of the ledger,
/// the id, the records; `None` leaves the discussion out.
pub(crate) type Map<'a, T> = dyn FnMut(Option<i64>, &str, &[&Record]) -> Option<T> + 'a;

/// What a backend offers inside one consistent read.
pub(crate) trait Discussions {
    /// Why a read stopped: a file's index that turned out damaged (read
    /// again once it is rebuilt), a database's error.
    type Stop;

    /// The newest `at_ms` of the ledger.
    fn newest(&self) -> Option<i64>;

    /// The discussions that may be open or active at `now_ms`, sorted;
    /// `None` when that cannot be told.
    fn live(&self, now_ms: i64) -> Option<Vec<String>>;

    /// Each of `ids` with its records, one at a time (an id without
    /// records is left out).
    fn each_of(
        &mut self,
        ids: &[&str],
        each: &mut dyn FnMut(&str, &[&Record]),
    ) -> Result<(), Self::Stop>;

    /// Every discussion with its records, from one pass in line order;
    /// with a `checker`, every line checked on the way, and what it found.
    fn each(
        &mut self,
        checker: Option<LineChecker>,
        each: &mut dyn FnMut(&str, &[&Record]),
    ) -> Result<Option<LineCheck>, Self::Stop>;

    /// How discussions are summarized, when this read can keep summaries.
    fn summarize(&self) -> Option<Summarize>;

    /// Hands every kept summary row that still holds to `row` (id, the
    /// instant it is settled from, the row) and returns the discussions
    /// touched since they were kept, which are derived instead.
    /// `Ok(Err(Untrusted))`: no kept rows to trust (none, damaged, out of
    /// date, or one that `row` refused), and what `row` was handed is
    /// forgotten.
    fn kept(
        &mut self,
        row: &mut dyn FnMut(&str, i64, &str) -> Result<(), Untrusted>,
    ) -> Result<Result<Vec<String>, Untrusted>, Self::Stop>;

    /// Keeps every discussion's new summary line, for the next list; they
    /// come in id order, and every one is taken, whatever becomes of the
    /// writing (what hands them on answers on the way).
    fn keep(&mut self, lines: &mut dyn Iterator<Item = SummaryLine>);
}

/// Every discussion mapped, in the order of their ids; with a `checker`,
/// every line checked on the same pass (`verify`).
pub(crate) fn all<T, D: Discussions>(
    discussions: &mut D,
    checker: Option<LineChecker>,
    map: &mut Map<'_, T>,
) -> Result<(Option<LineCheck>, Vec<T>), D::Stop> {
    let newest = discussions.newest();
    let mut mapped = Vec::new();
    let check = discussions.each(checker, &mut |id, records| {
        mapped.extend(map(newest, id, records).map(|t| (id.to_owned(), t)));
    })?;
    mapped.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok((check, mapped.into_iter().map(|(_, t)| t).collect()))
}

/// The discussions that may be open or active at the instant `now` gives
/// for the newest `at_ms`, mapped; `None` when they cannot be told.
pub(crate) fn live<T, D: Discussions>(
    discussions: &mut D,
    now: impl Fn(Option<i64>) -> i64,
    map: &mut Map<'_, T>,
) -> Result<Option<Vec<T>>, D::Stop> {
    let Some(ids) = discussions.live(now(discussions.newest())) else {
        return Ok(None);
    };
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    of(discussions, &ids, map).map(Some)
}

/// As `all`, for readers of many discussions (`list`), unordered: each
/// discussion settled at the instant `now` gives and not touched since its
/// row was kept answers through `from_row`; the others, a handful, are
/// derived through `map`. Without kept rows to trust, every discussion is
/// derived and summarized on one pass, and the summaries are kept for the
/// next reader.
pub(crate) fn summaries<T, D: Discussions>(
    discussions: &mut D,
    now: impl Fn(Option<i64>) -> i64,
    from_row: &mut dyn FnMut(&str) -> Result<Option<T>, Untrusted>,
    map: &mut Map<'_, T>,
) -> Result<Vec<T>, D::Stop> {
    let Some(summarize) = discussions.summarize() else {
        return all(discussions, None, map).map(|(_, mapped)| mapped);
    };
    let newest = discussions.newest();
    let now_ms = now(newest);
    let mut mapped = Vec::new();
    let mut derived = Vec::new();
    let kept = discussions.kept(&mut |id, settled_from_ms, row| {
        if settled_from_ms > now_ms {
            derived.push(id.to_owned());
        } else {
            mapped.extend(from_row(row)?);
        }
        Ok(())
    })?;
    if let Ok(touched) = kept {
        derived.extend(touched);
        let ids: Vec<&str> = derived.iter().map(String::as_str).collect();
        mapped.extend(of(discussions, &ids, map)?);
        return Ok(mapped);
    }
    // What the kept rows gave before one was refused is forgotten. The
    // answers of the unsettled, few, are kept apart: a slot for one in
    // every entry would be a row's size for each. A settled discussion's
    // answer is read from its new line (one derivation, not two, and no
    // second copy of it meanwhile).
    mapped.clear();
    let mut summarized = Vec::new();
    discussions.each(None, &mut |id, records| {
        let summary = summarize(id, records);
        let settled = summary.settled_from_ms <= now_ms;
        if !settled {
            mapped.extend(map(newest, id, records));
        }
        summarized.push((SummaryLine::new(id, &summary), settled));
    })?;
    // Room for every answer at once: grown by doubling, the last copy held
    // both the old half and the new whole at the peak of a first list.
    mapped.reserve_exact(summarized.len());
    summarized.sort_unstable_by(|a, b| a.0.id().cmp(b.0.id()));
    let mut unread = Vec::new();
    discussions.keep(&mut summarized.into_iter().map(|(line, settled)| {
        if settled {
            match from_row(line.row()) {
                Ok(answer) => mapped.extend(answer),
                // A row that does not read back: derived again.
                Err(Untrusted) => unread.push(line.id().to_owned()),
            }
        }
        line
    }));
    let ids: Vec<&str> = unread.iter().map(String::as_str).collect();
    mapped.extend(of(discussions, &ids, map)?);
    Ok(mapped)
}

/// The discussions `ids` mapped, in that order.
fn of<T, D: Discussions>(
    discussions: &mut D,
    ids: &[&str],
    map: &mut Map<'_, T>,
) -> Result<Vec<T>, D::Stop> {
    let newest = discussions.newest();
    let mut mapped = Vec::new();
    discussions.each_of(ids, &mut |id, records| {
        mapped.extend(map(newest, id, records));
    })?;
    Ok(mapped)
}
