//! Building the cache from the whole ledger in one streamed pass, reading
//! most lines only in part; see `scan_all`.

use super::index_file::{LineRef, idempotency_index_key, key_of};
use crate::global::Global;
use crate::ledger::lines::{LineFeed, operations_on_both_cores, read_line_at, stream_lines};
use crate::record::{OpMark, ReceiptKind, Record};
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashSet;
use std::fs::File;
use std::io;

/// What a scan of the ledger gathers.
#[derive(Default)]
pub(super) struct Gathered {
    pub(super) entries: Vec<LineRef>,
    pub(super) ids: HashSet<String>,
    pub(super) global: Global,
    pub(super) last_at_ms: Option<i64>,
    pub(super) live: crate::ledger::live::LiveSet,
}

/// The fields of a line the index needs, read without building the whole
/// record; the payload is skipped, not copied.
#[derive(Deserialize)]
struct Peek<'a> {
    v: u64,
    #[serde(borrow)]
    kind: Cow<'a, str>,
    at_ms: i64,
    #[serde(default, borrow)]
    correlation_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    discussion_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    receipt: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    agent_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(default)]
    op_lines: Option<u64>,
    #[serde(default, borrow)]
    op_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    idempotency_key: Option<Cow<'a, str>>,
    /// Only whether it is there: a key counts only with its digest.
    #[serde(default, borrow)]
    request_digest: Option<Cow<'a, str>>,
}

/// What one line adds, held back while its operation is incomplete.
/// `exact` tells whether it comes from a whole parse of the line.
struct Effect {
    entry: Option<(LineRef, String)>,
    /// The line's entry under its idempotency key, if it carries one.
    keyed: Option<LineRef>,
    global: Option<Record>,
    at_ms: Option<i64>,
    /// A reservation peeked at: (agent, at_ms).
    reservation: Option<(String, i64)>,
    offset: u64,
    exact: bool,
}

/// Facts taken from peeked lines, checked by a whole parse at the end:
/// only the few that decide the result need it.
#[derive(Default)]
struct Unchecked {
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
    let mut unchecked = Unchecked {
        forget_at: 8192,
        ..Unchecked::default()
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

fn commit(gathered: &mut Gathered, unchecked: &mut Unchecked, effect: Effect) {
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
        if !gathered.ids.contains(&id) {
            gathered.ids.insert(id);
        }
    }
    if let Some(record) = effect.global {
        gathered.global.apply(&record);
    }
    if let Some(at_ms) = effect.at_ms
        && gathered.last_at_ms.is_none_or(|t| at_ms > t)
    {
        gathered.last_at_ms = Some(at_ms);
        unchecked.last_at = (!effect.exact).then_some(effect.offset);
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

/// Drops the reservations that `Global::forget_old_reservations` would:
/// those an hour older than the same agent's newest one.
fn forget_old(reservations: &mut Vec<(u64, String, i64)>) {
    let mut newest: std::collections::HashMap<&str, i64> = Default::default();
    for (_, agent, t) in reservations.iter() {
        let n = newest.entry(agent.as_str()).or_insert(*t);
        *n = (*n).max(*t);
    }
    let horizon: std::collections::HashMap<String, i64> = newest
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

/// One line: peeked at when it can be, parsed whole when it must be.
/// Returns what it adds and its operation mark.
fn read_line(line: &[u8], offset: u64, line_no: u64, exact: bool) -> (Effect, OpMark) {
    let entry = |id: &str| {
        (
            LineRef {
                key: key_of(id),
                offset,
                len: line.len() as u32,
                line: line_no as u32,
            },
            id.to_string(),
        )
    };
    let line_ref = |key: u64| LineRef {
        key,
        offset,
        len: line.len() as u32,
        line: line_no as u32,
    };
    let mut effect = Effect {
        entry: None,
        keyed: None,
        global: None,
        at_ms: None,
        reservation: None,
        offset,
        exact: true,
    };
    let peeked = if exact {
        None
    } else {
        peek_message(line).or_else(|| serde_json::from_slice::<Peek>(line).ok())
    };
    let whole = match &peeked {
        Some(peek) => {
            peek.v != 1
                || matches!(
                    peek.kind.as_ref(),
                    "fleet" | "kill_switch" | "quota" | "credential"
                )
                // What a turn cost counts against its agent's spend caps.
                || (peek.kind == "receipt" && memchr::memmem::find(line, b"\"usage\"").is_some())
        }
        None => true,
    };
    if whole {
        return match Record::parse_with_mark(line, line_no as usize) {
            Ok((record, mark)) => {
                effect.entry = record.discussion_id().map(entry);
                effect.keyed = record
                    .idempotency
                    .as_ref()
                    .map(|i| line_ref(idempotency_index_key(&i.key)));
                effect.at_ms = Some(record.at_ms);
                effect.global = Some(record);
                (effect, mark)
            }
            Err(_) => (effect, OpMark::Alone),
        };
    }
    let peek = peeked.expect("peeked");
    effect.exact = false;
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

/// The fast way through a message line as `discuss` writes it: the fields
/// before `payload` are parsed as JSON on their own and the payload is not
/// read at all. Only a line whose payload is its last field takes this
/// way; any other gets `None` and is peeked at whole. A line that is not
/// valid JSON after all is indexed anyway and skipped when read back, as
/// replay skips it.
fn peek_message(line: &[u8]) -> Option<Peek<'static>> {
    const PREFIX: &[u8] = br#"{"v":1,"kind":"message","#;
    const PAYLOAD: &[u8] = br#","payload":""#;
    if !line.starts_with(PREFIX) || !line.ends_with(b"\"}") {
        return None;
    }
    let at = memchr::memmem::find(line, PAYLOAD)?;
    // The payload must run to the end: no quote inside it that is not
    // escaped, or another field follows it (one this way would not see).
    let payload = &line[at + PAYLOAD.len()..line.len() - 2];
    let unescaped_quote = memchr::memchr_iter(b'"', payload).any(|q| {
        let backslashes = payload[..q]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        backslashes % 2 == 0
    });
    if unescaped_quote || payload.iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1 {
        return None;
    }
    let mut head = Vec::with_capacity(at + 1);
    head.extend_from_slice(&line[..at]);
    head.push(b'}');
    let peek: Peek = serde_json::from_slice(&head).ok()?;
    Some(Peek {
        v: peek.v,
        kind: Cow::Borrowed("message"),
        id: Cow::Owned(peek.id.into_owned()),
        at_ms: peek.at_ms,
        correlation_id: peek.correlation_id.map(|c| Cow::Owned(c.into_owned())),
        discussion_id: None,
        receipt: None,
        agent_id: None,
        op_lines: peek.op_lines,
        op_id: peek.op_id.map(|o| Cow::Owned(o.into_owned())),
        idempotency_key: peek.idempotency_key.map(|k| Cow::Owned(k.into_owned())),
        request_digest: peek.request_digest.map(|d| Cow::Owned(d.into_owned())),
    })
}
