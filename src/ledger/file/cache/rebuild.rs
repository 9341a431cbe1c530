//! Building the cache from the whole ledger in one streamed pass, reading
//! most lines only in part; see `scan_all`.

use super::index_file::{LineRef, idempotency_index_key, key_of};
use super::peek::peek;
use crate::global::Global;
use crate::ledger::hash::{IdHashMap, KeyHashMap};
use crate::ledger::lines::{LineFeed, operations_on_both_cores, read_line_at, stream_lines};
use crate::record::{OpMark, ReceiptKind, Record};
use std::collections::HashSet;
use std::collections::hash_map::Entry;
use std::fs::File;
use std::io;

/// What a scan of the ledger gathers.
#[derive(Default)]
pub(super) struct Gathered {
    pub(super) entries: Vec<LineRef>,
    pub(super) ids: Ids,
    pub(super) global: Global,
    pub(super) last_at_ms: Option<i64>,
    pub(super) live: crate::ledger::live::LiveSet,
    /// Records added since the global state last forgot what no longer
    /// counts (`Global::forget_old_reservations`).
    added: u32,
}

/// The discussion ids met, found by the index key each entry carries
/// already (`key_of`): one lookup of a number per line, not a hash of the
/// id; the few ids whose key another one has are kept aside.
#[derive(Default)]
pub(super) struct Ids {
    by_key: KeyHashMap<String>,
    sharing_a_key: HashSet<String>,
}

impl Ids {
    fn insert(&mut self, key: u64, id: &str) {
        match self.by_key.entry(key) {
            Entry::Vacant(vacant) => {
                vacant.insert(id.to_owned());
            }
            Entry::Occupied(first) if first.get() != id => {
                if !self.sharing_a_key.contains(id) {
                    self.sharing_a_key.insert(id.to_owned());
                }
            }
            Entry::Occupied(_) => {}
        }
    }

    /// Every id, sorted.
    pub(super) fn into_sorted(self) -> Vec<String> {
        let mut ids: Vec<String> = self.by_key.into_values().collect();
        ids.extend(self.sharing_a_key);
        ids.sort_unstable();
        ids
    }
}

/// What one line adds, held back while its operation is incomplete: the
/// record of a line parsed whole, or what was peeked at.
struct Effect {
    /// Boxed: most lines are only peeked at, and an effect is moved a few
    /// times.
    whole: Option<Box<Record>>,
    entry: Option<(LineRef, String)>,
    /// The line's entry under its idempotency key, if it carries one.
    keyed: Option<LineRef>,
    at_ms: Option<i64>,
    /// A reservation peeked at: (agent, at_ms).
    reservation: Option<(String, i64)>,
    offset: u64,
    len: u32,
}

/// Facts taken from peeked lines, checked by a whole parse at the end:
/// only the few that decide the result need it.
#[derive(Default)]
struct PeekedFacts {
    /// The line that gave the latest `at_ms`, if it was only peeked at.
    last_at: Option<u64>,
    /// Reservations peeked at: (offset, agent, at_ms), newest last.
    reservations: Vec<(u64, String, i64)>,
    /// How many make it time to forget those out of the last hour.
    forget_at: usize,
}

/// One pass over the whole ledger, a chunk at a time: the discussion lines
/// as entries, the global state, the ids, the last `at_ms`. It gives the
/// same answers as parsing every record (`Snapshot::parse`), faster: most
/// lines are only peeked at; lines that change the global state are parsed
/// whole; and the few peeked facts the result depends on (the latest time,
/// the last operation's first line, the last hour of reservations) are
/// checked by a whole parse at the end. Should one not hold, the pass is
/// made again parsing every line.
pub(super) fn scan_all(ledger: &File, len: u64) -> io::Result<(Gathered, u64, u64)> {
    if let Some(result) = scan(ledger, len, false)? {
        return Ok(result);
    }
    Ok(scan(ledger, len, true)?.expect("an exact scan has nothing to check"))
}

fn scan(ledger: &File, len: u64, exact: bool) -> io::Result<Option<(Gathered, u64, u64)>> {
    let mut gathered = Gathered::default();
    let mut unchecked = PeekedFacts {
        forget_at: 8192,
        ..PeekedFacts::default()
    };
    let feed = |line: &mut LineFeed<'_>| stream_lines(ledger, len, line);
    let read = |offset, line_no, line: &[u8]| read_line(line, offset, line_no, exact);
    let commit = |effect| commit(&mut gathered, &mut unchecked, effect);
    // A long ledger's lines are peeked at by both cores.
    let streamed = operations_on_both_cores(len, feed, read, commit)?;
    let (covered, lines) = (streamed.end, streamed.lines);
    if exact {
        return Ok(Some((gathered, covered, lines)));
    }
    // The checks: each peeked fact the result depends on must be what a
    // whole parse of its line says. Which lines are torn depends on the
    // marks of the last operation: after a crash, scan again exactly.
    if streamed.cut_operation {
        return Ok(None);
    }
    if let Some(offset) = unchecked.last_at
        && read_record(ledger, offset)?
            .is_none_or(|record| Some(record.at_ms) != gathered.last_at_ms)
    {
        return Ok(None);
    }
    forget_old(&mut unchecked.reservations);
    for (offset, agent, at_ms) in &unchecked.reservations {
        match read_record(ledger, *offset)? {
            Some(record) if record.at_ms == *at_ms => {
                let same = matches!(&record.body, crate::ledger::Body::Receipt(r)
                    if r.kind() == Some(ReceiptKind::Reserved) && r.agent_id.as_deref() == Some(agent.as_str()));
                if !same {
                    return Ok(None);
                }
                gathered.global.apply(&record);
            }
            _ => return Ok(None),
        }
    }
    Ok(Some((gathered, covered, lines)))
}

/// The record on the line at `offset`.
fn read_record(ledger: &File, offset: u64) -> io::Result<Option<Record>> {
    let (line, whole) = read_line_at(ledger, offset, u64::MAX)?;
    Ok(whole.then(|| Record::parse(&line, 0).ok()).flatten())
}

fn commit(gathered: &mut Gathered, unchecked: &mut PeekedFacts, effect: Effect) {
    if let Some(record) = effect.whole {
        if gathered.last_at_ms.is_none_or(|t| record.at_ms > t) {
            unchecked.last_at = None;
        }
        gathered.add(&record, effect.offset, effect.len);
        if let Some(id) = record.discussion_id() {
            gathered.ids.insert(key_of(id), id);
        }
        return;
    }
    if let Some(entry) = effect.keyed {
        gathered.entries.push(entry);
    }
    if let Some((entry, id)) = effect.entry {
        gathered.entries.push(entry);
        // A peeked `at_ms` is the one a whole parse gives, for a line that
        // is a record at all; one that is not only adds a candidate.
        if let Some(at_ms) = effect.at_ms {
            gathered.live.touch(&id, at_ms);
        }
        gathered.ids.insert(entry.key, &id);
    }
    if let Some(at_ms) = effect.at_ms
        && gathered.last_at_ms.is_none_or(|t| at_ms > t)
    {
        gathered.last_at_ms = Some(at_ms);
        unchecked.last_at = Some(effect.offset);
    }
    if let Some((agent, at_ms)) = effect.reservation {
        unchecked.reservations.push((effect.offset, agent, at_ms));
        // Only the last hour counts: forget what fell out of it, now and
        // then, so memory stays small however long the ledger.
        if unchecked.reservations.len() >= unchecked.forget_at {
            forget_old(&mut unchecked.reservations);
            unchecked.forget_at = (unchecked.reservations.len() * 2).max(8192);
        }
    }
}

impl Gathered {
    /// What a record parsed whole adds, on line `record.line` at `offset`
    /// (`len` bytes): its index entries and its `Fold`, as `Cache::fold`
    /// adds of a line appended, but its discussion's id, which the caller
    /// adds (once per line, or once).
    fn add(&mut self, record: &Record, offset: u64, len: u32) {
        let line_ref = |key| LineRef {
            key,
            offset,
            len,
            line: record.line as u32,
        };
        if let Some(idempotency) = &record.idempotency {
            self.entries
                .push(line_ref(idempotency_index_key(&idempotency.key)));
        }
        if let Some(id) = record.discussion_id() {
            self.entries.push(line_ref(key_of(id)));
        }
        crate::ledger::fold::Fold {
            global: &mut self.global,
            live: &mut self.live,
            last_at_ms: &mut self.last_at_ms,
        }
        .record(record);
        // Only the last hour of reservations and the last day of spending
        // count: forgetting the rest now and then keeps memory small on a
        // pass that parses every line (what is forgotten is the same).
        self.added += 1;
        if self.added == 1 << 16 {
            self.added = 0;
            self.global.forget_old_reservations();
        }
    }
}

/// Drops the reservations that `Global::forget_old_reservations` would:
/// those an hour older than the same agent's newest one.
fn forget_old(reservations: &mut Vec<(u64, String, i64)>) {
    let mut newest: IdHashMap<&str, i64> = Default::default();
    for (_, agent, t) in reservations.iter() {
        let n = newest.entry(agent.as_str()).or_insert(*t);
        *n = (*n).max(*t);
    }
    let horizon: IdHashMap<String, i64> = newest
        .into_iter()
        .map(|(agent, t)| {
            (
                agent.to_owned(),
                t.saturating_sub(crate::global::QUOTA_WINDOW_MS),
            )
        })
        .collect();
    reservations.retain(|(_, agent, t)| *t > horizon[agent.as_str()]);
}

/// A receipt's `usage` key, searched for in every receipt a rebuild peeks
/// at: built once, as building a searcher costs more than a short search.
static USAGE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"usage\""));

/// One line: peeked at when it can be, parsed whole when it must be.
/// Returns what it adds and its operation mark.
fn read_line(line: &[u8], offset: u64, line_no: u64, exact: bool) -> (Effect, OpMark) {
    let line_ref = |key: u64| LineRef {
        key,
        offset,
        len: line.len() as u32,
        line: line_no as u32,
    };
    let mut effect = Effect {
        whole: None,
        entry: None,
        keyed: None,
        at_ms: None,
        reservation: None,
        offset,
        len: line.len() as u32,
    };
    let peeked = if exact { None } else { peek(line) };
    let whole = match &peeked {
        Some(peek) => {
            peek.v != 1
                || matches!(
                    peek.kind.as_ref(),
                    "fleet" | "kill_switch" | "quota" | "credential"
                )
                // What a turn cost counts against its agent's spend caps.
                || (peek.kind == "receipt" && USAGE.find(line).is_some())
        }
        None => true,
    };
    if whole {
        return match Record::parse_with_mark(line, line_no as usize) {
            Ok((record, mark)) => {
                effect.whole = Some(Box::new(record));
                (effect, mark)
            }
            Err(_) => (effect, OpMark::Alone),
        };
    }
    let peek = peeked.expect("peeked");
    let entry = |id: &str| (line_ref(key_of(id)), id.to_string());
    effect.keyed = match (&peek.idempotency_key, &peek.request_digest) {
        (Some(k), Some(_)) => Some(line_ref(idempotency_index_key(k))),
        _ => None,
    };
    effect.at_ms = Some(peek.at_ms);
    match peek.kind.as_ref() {
        "message" => effect.entry = peek.correlation_id.as_deref().map(entry),
        "receipt" => {
            effect.entry = peek.discussion_id.as_deref().map(entry);
            if peek.receipt.as_deref() == Some(ReceiptKind::Reserved.name())
                && let Some(agent) = peek.agent_id
            {
                effect.reservation = Some((agent.into_owned(), peek.at_ms));
            }
        }
        _ => {}
    }
    let mark = OpMark::of(&peek.id, peek.op_lines, peek.op_id.as_deref());
    (effect, mark)
}

#[cfg(test)]
mod tests {
    use super::Ids;

    /// Ids whose keys collide are all kept, each once.
    #[test]
    fn ids_sharing_a_key_are_each_kept_once() {
        let mut ids = Ids::default();
        for (key, id) in [
            (7, "dsc_b"),
            (7, "dsc_a"),
            (7, "dsc_b"),
            (9, "dsc_c"),
            (7, "dsc_a"),
        ] {
            ids.insert(key, id);
        }
        assert_eq!(ids.into_sorted(), ["dsc_a", "dsc_b", "dsc_c"]);
    }
}
