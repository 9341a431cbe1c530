//! The entry point of the fuzz target `fuzz/fuzz_targets/replay.rs` and of
//! the test that replays its corpus on stable (`tests/cli/fuzz_corpus.rs`).
//!
//! It does with arbitrary bytes everything a reader does with a ledger:
//! parse, derive every discussion at several instants, derive the global
//! state, render the JSON of `show` and the human text. None of it may
//! panic. Then it writes the bytes to a file and reads them through the
//! cache (index rebuilt from scratch): every discussion's records, the
//! global state and the newest time must be exactly what replay gives.

use crate::discussion::Row;
use crate::discussion::derive;
use crate::global::Global;
use crate::ledger::Untrusted;

mod snapshot;
pub(crate) use snapshot::Snapshot;

/// What one replay found, so a test can check it replayed something.
#[derive(Debug, Default, PartialEq)]
pub struct Replay {
    pub records: usize,
    pub unreadable: usize,
    pub torn_tail: usize,
    pub discussions: usize,
}

/// Every reader's view of the bytes, checked against the others. Long on
/// purpose: each check reuses what the ones before it derived, in the
/// order a reader meets the ledger.
pub fn replay(bytes: &[u8]) -> Replay {
    // The typed pass over a line reads it as the `Value` pass does, or
    // leaves it to that one.
    for line in bytes.split(|&b| b == b'\n') {
        if let Some(typed) = crate::record::Record::parse_typed(line, 1) {
            let through_value = crate::record::Record::parse_through_value(line, 1);
            assert_eq!(Ok(typed), through_value, "the two passes over a line");
        }
        // The typed pass's scanner reads it as serde does, or leaves it.
        assert!(
            crate::record::Record::typed_scan_as_serde(line),
            "the typed scan of {line:?}"
        );
        // So does the index's peek at a line, or it leaves it to serde.
        assert!(
            crate::ledger::peek_as_serde(line),
            "the index's peek at {line:?}"
        );
    }
    on_two_cores_as_on_one(bytes);
    let snapshot = Snapshot::parse(bytes);
    // Every record's event line, written by hand, is serde's.
    for record in &snapshot.records {
        let event = crate::operations::events::Event {
            record,
            status: None,
            message: None,
        };
        assert!(crate::output::json_by_hand_as_serde(&event), "{record:?}");
        // A message's envelope is read by its scanner as serde reads it,
        // or left to serde.
        if let crate::record::Body::Message(message) = &record.body {
            assert!(
                crate::discussion::envelope::envelope_scan_as_serde(&message.payload),
                "the envelope scan of {:?}",
                message.payload
            );
        }
    }
    let global = Global::derive(&snapshot.records);
    let last = snapshot.last_at_ms.unwrap_or(0);
    for agent in global.reservations.keys().chain(global.spent.keys()) {
        let _ = global.check_quota(agent, last);
        let _ = global.check_spend_quota(agent, last);
    }
    let _ = global.check_kill_switch();
    let switches = global.switches();
    let ids = snapshot.discussion_ids();
    for id in &ids {
        let records = snapshot.discussion(id);
        // The switches that cover a discussion: the writers' check and the
        // rows' agree; a due escalation is recorded once, adds no finding
        // and changes no status.
        if let Some(d) = derive(id, &records, last) {
            let covered = d.covered();
            assert_eq!(global.halt_of(covered), switches.halt_of(covered), "{id}");
            let stamp = crate::engine::Stamp {
                at_ms: last,
                by: "fuzz".into(),
                token_id: None,
            };
            if let Ok((due, Some(after))) = crate::engine::plan_due_escalation(id, &records, &stamp)
            {
                assert!(due.len() <= 1, "{id}");
                if !due.is_empty() {
                    assert_eq!(after.status, d.status, "{id}");
                    assert_eq!(after.findings.len(), d.findings.len(), "{id}");
                    let again: Vec<&crate::record::Record> =
                        records.iter().copied().chain(due.iter()).collect();
                    let (twice, _) =
                        crate::engine::plan_due_escalation(id, &again, &stamp).unwrap();
                    assert!(twice.is_empty(), "{id}: escalated twice");
                }
            }
        }
        // The event stream's status after each record is what derive
        // says of the records so far at that record's time.
        let mut after_each = crate::discussion::StatusAfterEach::new(id);
        for seen in 1..=records.len() {
            let so_far = &records[..seen];
            let derived = derive(id, so_far, so_far[seen - 1].at_ms);
            let status = after_each.push(so_far);
            assert_eq!(
                status,
                derived.as_ref().map(|d| d.status),
                "{id} after {seen}"
            );
            assert_eq!(
                after_each.root(),
                derived.as_ref().and_then(|d| d.root.as_ref()),
                "{id} after {seen}"
            );
            // The type and turn the stream prints: the message's envelope
            // as its own parse reads it.
            let message = match &so_far[seen - 1].body {
                crate::record::Body::Message(m) => m
                    .correlation_id
                    .as_deref()
                    .and_then(|c| crate::discussion::Envelope::parse(&m.payload, c).ok())
                    .map(|e| (e.kind, e.turn)),
                _ => None,
            };
            assert_eq!(after_each.last_message(), message, "{id} after {seen}");
            let event = crate::operations::events::Event {
                record: so_far[seen - 1],
                status,
                message,
            };
            assert!(
                crate::output::json_by_hand_as_serde(&event),
                "{id} after {seen}"
            );
            // What a fold without contents reads of the envelope: all but
            // the body, and refused where the whole parse refuses.
            if let crate::record::Body::Message(m) = &so_far[seen - 1].body {
                let whole = crate::discussion::Envelope::parse(&m.payload, id)
                    .map(crate::discussion::Envelope::without_body);
                assert_eq!(
                    crate::discussion::Envelope::parse_without_body(&m.payload, id),
                    whole,
                    "{id} after {seen}"
                );
            }
        }
        // Before, at and long after the last record: deadlines fire in
        // between.
        for now in [
            last.saturating_sub(1),
            last,
            last.saturating_add(86_400_000),
        ] {
            let discussion = derive(id, &records, now).expect("records name it");
            // The fold without the contents (`verify`, `list`) comes to
            // the same status and row.
            assert_eq!(
                crate::discussion::derive_status(id, &records, now),
                Some(discussion.status),
                "{id} at {now}"
            );
            let lean = crate::discussion::derive_lean(id, &records, now).map(|d| Row::of(&d));
            assert_eq!(lean, Some(Row::of(&discussion)), "{id} at {now}");
            assert!(
                crate::output::rows_by_hand_as_serde(vec![Row::of(&discussion)]),
                "the row of {id} at {now} by hand"
            );
            assert!(
                crate::output::summary_row_as_serde(Some(&Row::of(&discussion))),
                "the summary row of {id} at {now} by hand"
            );
            let (json, _, _) = crate::output::render_all(discussion, now);
            assert!(json.is_object());
        }
        assert!(derive(id, &records, i64::MAX).is_some());
        // What the cache keeps for lists (`list::summarize`) is what replay
        // says from its instant on, whatever the clock says later.
        let summary = crate::operations::lists::summarize(id, &records);
        let kept: Option<Row> = serde_json::from_str(&summary.row).expect("a kept row reads back");
        assert!(
            crate::discussion::row_scan_as_serde(&summary.row),
            "the row scanner reads {} as serde",
            summary.row
        );
        for now in [
            summary.settled_from_ms,
            summary.settled_from_ms.saturating_add(86_400_000),
        ] {
            let replayed = derive(id, &records, now).map(|d| Row::of(&d));
            assert_eq!(replayed, kept, "the kept row of {id} at {now}");
        }
        // A reader at the dawn of time: every record stamped more than the
        // allowed skew after it is ahead, and with none left the discussion
        // has not begun for it (`ledger.md`, "Clock skew").
        let ahead_of_all = records
            .iter()
            .all(|r| r.at_ms > i64::MIN + crate::clock::MAX_SKEW_MS);
        assert_eq!(derive(id, &records, i64::MIN).is_none(), ahead_of_all);
        assert_eq!(
            crate::discussion::derive_status(id, &records, i64::MIN).is_none(),
            ahead_of_all
        );
        // A reader an hour before the last record leaves out what is
        // stamped after it, and counts it as clock_skew.
        let early = last.saturating_sub(3_600_000);
        if let Some(d) = derive(id, &records, early) {
            let ahead = records
                .iter()
                .filter(|r| r.at_ms > early.saturating_add(crate::clock::MAX_SKEW_MS))
                .count();
            let skewed = d
                .findings
                .iter()
                .filter(|f| f.kind == crate::discussion::FindingKind::ClockSkew)
                .count();
            assert_eq!(skewed, ahead, "one clock_skew finding per record ahead");
        }
    }
    hides_nothing(bytes, &snapshot);
    through_the_cache(bytes, &snapshot, &ids);
    Replay {
        records: snapshot.records.len(),
        unreadable: snapshot.unreadable.len(),
        torn_tail: snapshot.torn_tail,
        discussions: ids.len(),
    }
}

/// `replay` of the bytes, and of two variants that tamper with them as a
/// hand or a foreign tool might: the complete lines in reverse order, and
/// one line edited to claim a thousand lines after it (`op_lines`), with
/// and without an `op_id` of its own. Returns the summary of the bytes.
pub fn replay_variants(bytes: &[u8]) -> Replay {
    let summary = replay(bytes);
    edits_break_the_chain(bytes);
    let end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let lines: Vec<&[u8]> = bytes[..end].split_inclusive(|&b| b == b'\n').collect();
    if lines.is_empty() {
        return summary;
    }
    let mut reversed: Vec<u8> = lines.iter().rev().flat_map(|l| l.iter().copied()).collect();
    reversed.extend_from_slice(&bytes[end..]);
    replay(&reversed);
    // Which line: one the bytes choose, so the fuzzer explores them all.
    let pick = crate::ledger::hash::hash64(bytes) as usize % lines.len();
    for claim in [
        &br#"{"op_lines":1000,"#[..],
        br#"{"op_lines":1000,"op_id":"x","#,
    ] {
        let mut edited = Vec::with_capacity(bytes.len() + claim.len());
        for (i, line) in lines.iter().enumerate() {
            match line.strip_prefix(b"{") {
                Some(rest) if i == pick => {
                    edited.extend_from_slice(claim);
                    edited.extend_from_slice(rest);
                }
                _ => edited.extend_from_slice(line),
            }
        }
        edited.extend_from_slice(&bytes[end..]);
        replay(&edited);
    }
    // And a claim that opens an operation for real: its own id as op_id.
    let opened = serde_json::from_slice::<serde_json::Value>(lines[pick].trim_ascii_end())
        .ok()
        .filter(|v| v["id"].is_string())
        .map(|mut v| {
            v["op_id"] = v["id"].clone();
            v["op_lines"] = 1000.into();
            v.to_string()
        });
    if let Some(opened) = opened {
        let mut edited = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if i == pick {
                edited.extend_from_slice(opened.as_bytes());
                edited.push(b'\n');
            } else {
                edited.extend_from_slice(line);
            }
        }
        edited.extend_from_slice(&bytes[end..]);
        replay(&edited);
    }
    summary
}

/// The JSON objects among the bytes' complete lines, chained as `discuss`
/// chains them, must check clean; then any one byte of one line changed
/// (never into a newline) is a `chain_broken` finding at the line after
/// it, unless the change tore what follows off as an operation cut short
/// (a torn tail, its own finding) or it was the last line (which only a
/// seal covers: its digest changed).
fn edits_break_the_chain(bytes: &[u8]) {
    use crate::ledger::check::chain_breaks;
    use crate::record::chain;
    let mut prev = chain::before_first_line();
    let mut lines: Vec<Vec<u8>> = Vec::new();
    for line in bytes.split(|&b| b == b'\n') {
        let Ok(serde_json::Value::Object(mut object)) = serde_json::from_slice(line) else {
            continue;
        };
        object.insert(
            "prev".into(),
            format!("sha256:{}", chain::hex(&prev)).into(),
        );
        let mut line = serde_json::Value::Object(object).to_string().into_bytes();
        prev = chain::digest_of(&line);
        line.push(b'\n');
        lines.push(line);
    }
    if lines.is_empty() {
        return;
    }
    let chained = lines.concat();
    let (breaks, _) = chain_breaks(&chained);
    assert_eq!(breaks, Vec::<u64>::new(), "a chained ledger checks clean");
    let seed = crate::ledger::hash::hash64(bytes) as usize;
    let pick = seed % lines.len();
    let at = (seed >> 16) % (lines[pick].len() - 1);
    let mut edited = lines.clone();
    let byte = &mut edited[pick][at];
    *byte = match byte.wrapping_add(1 + (seed >> 40) as u8 % 200) {
        b'\n' => b'\n' + 1,
        other => other,
    };
    let edited = edited.concat();
    assert_ne!(edited, chained);
    let (breaks, torn) = chain_breaks(&edited);
    let next = pick as u64 + 2;
    if pick + 1 == lines.len() {
        let last = &edited[edited.len() - lines[pick].len()..edited.len() - 1];
        assert_ne!(chain::digest_of(last), prev, "the last line's digest");
    } else {
        assert!(
            breaks.contains(&next) || torn > 0,
            "line {} edited: breaks {breaks:?}, torn {torn}",
            pick + 1
        );
    }
}

/// The lines parsed on a second core (`operations_ahead`), or by both in
/// turns (`operations_on_both_cores`), come out as they do on one: the
/// same records in the same order, the same findings, the same end.
pub(crate) fn on_two_cores_as_on_one(bytes: &[u8]) {
    use crate::ledger::lines::{
        LineFeed, lines_in_memory, operations_ahead, operations_of, operations_on_both_cores,
        record_and_mark,
    };
    let feed = |line: &mut LineFeed<'_>| lines_in_memory(bytes, line);
    let read = |_, line_no, line: &[u8]| record_and_mark(line_no, line);
    let (mut one, mut two) = (Vec::new(), Vec::new());
    let on_one = operations_of(feed, read, |r| one.push(r)).expect("bytes in memory");
    let on_two = operations_ahead(feed, read, |r| two.push(r)).expect("bytes in memory");
    assert_eq!(one, two, "the records on two cores");
    let mut both = Vec::new();
    let on_both =
        operations_on_both_cores(u64::MAX, feed, read, |r| both.push(r)).expect("bytes in memory");
    assert_eq!(one, both, "the records read by both cores in turns");
    assert_eq!(
        (on_one.end, on_one.lines, on_one.cut_operation),
        (on_both.end, on_both.lines, on_both.cut_operation),
        "where streaming on both cores ended"
    );
    assert_eq!(
        on_one.findings, on_both.findings,
        "what streaming found on both cores"
    );
    assert_eq!(
        (
            on_one.end,
            on_one.lines,
            on_one.cut_operation,
            on_one.findings
        ),
        (
            on_two.end,
            on_two.lines,
            on_two.cut_operation,
            on_two.findings
        ),
        "what streaming found on two cores"
    );
}

/// Only bytes after the last `\n` may be torn, except the lines of a final
/// operation that each claim to belong to it (`ledger.md`, "File"): no
/// complete line is held back because of what another line says.
fn hides_nothing(bytes: &[u8], snapshot: &Snapshot) {
    use crate::record::{OpMark, Record};
    let end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let held = snapshot.torn_tail.saturating_sub(bytes.len() - end);
    if held == 0 {
        return;
    }
    let lines: Vec<&[u8]> = bytes[end - held..end - 1].split(|&b| b == b'\n').collect();
    let Ok((first, OpMark::Opens { op_id, lines: n })) = Record::parse_with_mark(lines[0], 0)
    else {
        panic!("complete lines held back without an operation opening them");
    };
    assert_eq!(first.id, op_id);
    assert!((lines.len() as u64) < n, "a whole operation held back");
    for line in &lines[1..] {
        let mark = Record::parse_with_mark(line, 0).map(|(_, mark)| mark);
        assert_eq!(
            mark,
            Ok(OpMark::Member {
                op_id: op_id.clone()
            }),
            "a line held back that does not claim to belong"
        );
    }
}

/// The cache must agree with replay on any bytes. Long on purpose: one
/// ledger file written once, then every path through its cache (lookups,
/// lists at several instants, the live set, a rebuild) checked in turn.
fn through_the_cache(bytes: &[u8], snapshot: &Snapshot, ids: &[&str]) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static RUN: AtomicUsize = AtomicUsize::new(0);
    // tmpfs where there is one: the index's fsyncs cost nothing there.
    let shm = std::path::Path::new("/dev/shm");
    let root = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let dir = root.join(format!(
        "discuss-fuzz-{}-{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let path = dir.join("ledger.jsonl");
    std::fs::write(&path, bytes).expect("the ledger");
    let ledger = crate::ledger::Ledger::File(crate::ledger::FileLedger::new(path.clone()));
    let view = match ledger.view(ids) {
        Ok(view) => view,
        // Bytes whose first line is no record are not a ledger: readers
        // refuse them as writers do, and there is nothing to compare.
        Err(err) if err.code == crate::error::ErrorCode::LedgerUnreadable => {
            let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
            assert!(
                bytes.contains(&b'\n') && crate::record::Record::parse(first, 1).is_err(),
                "a ledger whose first line is a record refused: {err}"
            );
            let _ = std::fs::remove_dir_all(&dir);
            return;
        }
        Err(err) => panic!("a view of any bytes: {err}"),
    };
    for id in ids {
        let replayed: Vec<_> = snapshot.discussion(id).into_iter().cloned().collect();
        let cached: Vec<_> = view.discussion(id).into_iter().cloned().collect();
        assert_eq!(cached, replayed, "the records of {id}");
    }
    assert_eq!(view.last_at_ms(), snapshot.last_at_ms, "the newest time");
    let mut global = Global::derive(&snapshot.records);
    global.forget_old_reservations();
    let mut cached = view.global_folded().clone();
    for times in cached.reservations.values_mut() {
        times.sort_unstable();
    }
    for times in global.reservations.values_mut() {
        times.sort_unstable();
    }
    assert_eq!(cached, global, "the global state");
    // At the newest record's time, a minute and sixteen minutes later,
    // with every discussion replayed once for both checks: the live set
    // never misses one that is open or active, and lists through the
    // summary (written at the first instant, read at the others) are what
    // replay says.
    let last = snapshot.last_at_ms.unwrap_or(0);
    let summarized = crate::ledger::Ledger::File(crate::ledger::FileLedger::new(path.clone()))
        .summarize_with(crate::operations::lists::summarize);
    let list_at = |now: i64| {
        let mut listed = summarized
            .map_summaries(
                |_| now,
                |json| serde_json::from_str::<Option<Row>>(json).map_err(|_| Untrusted),
                |_, id, records| derive(id, records, now).map(|d| Row::of(&d)),
            )
            .expect("a list of any bytes");
        listed.sort_by(|a, b| a.id.cmp(&b.id));
        listed
    };
    let forget_the_cache = || {
        for suffix in [".index", ".checkpoint", ".summary"] {
            let mut cached = path.clone().into_os_string();
            cached.push(suffix);
            let _ = std::fs::remove_file(cached);
        }
    };
    // The first list after the cache is gone rebuilds it and writes the
    // summary: at an instant an hour before the newest record too, when
    // discussions settled by that record are not yet.
    forget_the_cache();
    let before = last.saturating_sub(3_600_000);
    let mut replayed: Vec<Row> = ids
        .iter()
        .filter_map(|id| derive(id, &snapshot.discussion(id), before))
        .map(|d| Row::of(&d))
        .collect();
    replayed.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(list_at(before), replayed, "the first list at {before}");
    forget_the_cache();
    for now in [
        last,
        last.saturating_add(60_000),
        last.saturating_add(960_000),
    ] {
        let replayed: Vec<Row> = ids
            .iter()
            .filter_map(|id| derive(id, &snapshot.discussion(id), now))
            .map(|d| Row::of(&d))
            .collect();
        let live = ledger
            .map_live(|_| now, |_, id, _| Some(id.to_owned()))
            .expect("the live set of any bytes");
        if let Some(live) = live {
            for row in &replayed {
                if matches!(
                    row.status,
                    crate::discussion::Status::Open | crate::discussion::Status::Active
                ) {
                    assert!(live.contains(&row.id), "{} is live at {now}", row.id);
                }
            }
        }
        let mut replayed = replayed;
        replayed.sort_by(|a, b| a.id.cmp(&b.id));
        assert_eq!(list_at(now), replayed, "the list at {now}");
    }
    // What `verify` and `list` stream must be what replay holds.
    let check = ledger
        .check_lines(crate::ledger::LineChecker::new(0), |_, _| {})
        .expect("a check of any bytes");
    assert_eq!(check.records, snapshot.records.len() as u64, "records");
    assert_eq!(check.unreadable, snapshot.unreadable, "unreadable lines");
    assert_eq!(check.torn_tail, snapshot.torn_tail as u64, "torn tail");
    let mut streamed = ledger
        .map_discussions(|_, id, records| Some((id.to_string(), records.len())))
        .expect("every discussion");
    let mut replayed: Vec<(String, usize)> = ids
        .iter()
        .map(|id| (id.to_string(), snapshot.discussion(id).len()))
        .collect();
    streamed.sort();
    replayed.sort();
    assert_eq!(streamed, replayed, "the discussions");
    let _ = std::fs::remove_dir_all(dir);
}
