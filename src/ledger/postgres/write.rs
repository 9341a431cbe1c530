//! Writing a PostgreSQL ledger: one transaction per operation (under the
//! locks of what it touches, numbered under a short lock at its end) or
//! import (under the ledger's lock), the lines and the state row together,
//! the summaries of the discussions touched.

use super::*;

impl PgLedger {
    /// One write within `scope` (see `docs/scale-out.md`, "Writers side
    /// by side"). The read-validate step runs under the locks of what the
    /// scope touches (its discussions, the agents whose quota it spends,
    /// its idempotency key) and `LOCK_KEY` shared, so only writes that
    /// meet wait for each other; the lines are numbered under `NUMBER_KEY`,
    /// held from just before the insert to the commit, so lines become
    /// visible in the order of their numbers. A global write (fleets,
    /// quotas, the kill-switch) and the first write of a database hold
    /// `LOCK_KEY` alone, as every write of earlier versions did.
    pub(crate) fn append<T>(&self, scope: Scope<'_>, plan: impl Plan<T>) -> Result<T> {
        self.writing_session(|client| {
            let mut tx = client.transaction()?;
            let (mut tx, keeps_summaries, exclusive) = match Self::lock_scope(&mut tx, &scope)? {
                Some(keeps_summaries) => (tx, keeps_summaries, false),
                None => {
                    tx.rollback()?;
                    let (tx, keeps_summaries) = Self::writing(client)?;
                    (tx, keeps_summaries, true)
                }
            };
            let mut state = if exclusive {
                self.written_state(&mut tx)?
            } else {
                self.scoped_state(&mut tx)?
            };
            let records = records_of(&mut tx, scope.discussions, state.lines)?;
            let keyed = match scope.idempotency_key {
                Some(key) => keyed_of(&mut tx, key, state.lines)?,
                None => None,
            };
            let view = state.view(records, keyed);
            let planned = plan(&view);
            state.folded.global = view.global;
            // A refusal writes nothing: the transaction is rolled back.
            let (mut records, result) = planned?;
            if records.is_empty() && !state.dirty {
                return Ok(result);
            }
            if !exclusive {
                // Numbered at the end: the state is read again under the
                // numbering lock, with every line committed before it.
                tx.execute_typed(
                    "SELECT pg_advisory_xact_lock($1)",
                    &[(&NUMBER_KEY, Type::INT8)],
                )?;
                state = self.scoped_state(&mut tx)?;
                // A writer that planned beside this one may have numbered
                // a later time first: lines keep `at_ms` non-decreasing.
                keep_time_in_order(&mut records, state.folded.last_at_ms);
            }
            failpoint::hit("append.before_write").map_err(|e| self.failed(&e))?;
            let mut prev = last_line_digest(&mut tx, &state)?;
            let text = Record::operation_lines(&records, &mut prev);
            let lines = text.as_bytes().split(|b| *b == b'\n');
            let complete = state.folded.summarized == state.lines;
            let first_new = state.lines + 1;
            let rows = fold_lines(&mut state, lines.zip(records.iter().map(Some)));
            // The summaries stay complete when they were: those of the
            // discussions this operation touched are written with it, made
            // from what the view read of them and the lines just folded (no
            // other writer touches them: their locks are held).
            let mut summaries = None;
            if let (Some(summarize), true) = (self.summarize, complete && keeps_summaries) {
                let written: Vec<Record> = rows
                    .lines
                    .iter()
                    .zip(first_new..)
                    .filter_map(|(line, line_no)| Record::parse(line, line_no as usize).ok())
                    .collect();
                summaries = Some(summaries_of(summarize, &view.records, &written));
                state.folded.summarized = state.lines;
            }
            write_operation(&mut tx, &mut state, &rows, summaries.as_ref())?;
            failpoint::hit("append.before_fsync").map_err(|e| self.failed(&e))?;
            tx.commit()?;
            let _ = failpoint::hit("append.after_fsync");
            Ok(result)
        })
    }

    pub(super) fn failed(&self, err: &std::io::Error) -> Fail {
        Fail::Discuss(Error::io(&self.location.shown, err))
    }

    /// Replaces `discuss_summaries` by `fresh`, the summaries of the first
    /// `lines` lines, if the ledger still has exactly those.
    pub(super) fn write_summaries(&self, lines: u64, fresh: &[SummaryLine]) -> Result<()> {
        self.session(|client| {
            // A reader never waits for writers: with a writer under way the
            // summaries wait for a later list.
            let Some((mut tx, keeps_summaries)) = Self::writing_unless_busy(client)? else {
                return Ok(());
            };
            let mut state = self.written_state(&mut tx)?;
            if !keeps_summaries || state.lines != lines || state.folded.summarized == lines {
                return Ok(());
            }
            tx.batch_execute("DELETE FROM discuss_summaries")?;
            for batch in fresh.chunks(IMPORT_BATCH) {
                let ids: Vec<&str> = batch.iter().map(SummaryLine::id).collect();
                let settled: Vec<i64> = batch.iter().map(SummaryLine::settled_from_ms).collect();
                let rows: Vec<&str> = batch.iter().map(SummaryLine::row).collect();
                tx.execute_typed(
                    UPSERT_SUMMARIES,
                    &[
                        (&ids, Type::TEXT_ARRAY),
                        (&settled, Type::INT8_ARRAY),
                        (&rows, Type::TEXT_ARRAY),
                    ],
                )?;
            }
            state.folded.summarized = lines;
            save_state(&mut tx, &mut state)?;
            tx.commit()?;
            Ok(())
        })
    }

    /// Appends the lines `feed` gives (checked beforehand: complete lines,
    /// whole operations) in one transaction; how many.
    pub(crate) fn import(
        &self,
        source: &crate::ledger::import::Source<'_>,
    ) -> Result<crate::ledger::import::Imported> {
        self.writing_session(|client| {
            // The summaries fall behind: the next list writes them anew.
            let (mut tx, _) = Self::writing(client)?;
            let mut state = self.written_state(&mut tx)?;
            // Under the writer lock: which of the file's record ids are here.
            let ids: Vec<&str> = source.ids().collect();
            let existing: Vec<(String, Vec<u8>)> = tx
                .query(
                    "SELECT record_id, line FROM discuss_lines WHERE record_id = ANY($1)",
                    &[&ids],
                )?
                .iter()
                .map(|row| (row.get(0), row.get(1)))
                .collect();
            let skip = source.decide(existing).map_err(Fail::Discuss)?;
            let mut prev = last_line_digest(&mut tx, &state)?;
            let boundary = source.boundary(&skip, &mut prev).map_err(Fail::Discuss)?;
            let feed = |line: &mut LineFeed<'_>| {
                crate::ledger::lines::stream_lines(source.file, source.len, |offset, n, text| {
                    if !skip.contains(&offset) {
                        line(offset, n, text);
                    }
                })
            };
            // COPY, the server's own way in for many rows: one stream of
            // rows in the binary format, no statement per batch.
            let mut failed: Option<postgres::Error> = None;
            let mut imported = 0u64;
            let mut rows = BinaryCopyInWriter::new(
                tx.copy_in(COPY_LINES)?,
                &[Type::INT8, Type::BYTEA, Type::TEXT, Type::TEXT, Type::TEXT],
            );
            let mut imported_line = |line: &[u8], counted: bool| {
                if failed.is_some() {
                    return;
                }
                imported += u64::from(counted);
                let line_no = state.lines + 1;
                let record = Record::parse(line, line_no as usize).ok();
                state.fold(line_no, line.len(), chain::digest_of(line), record.as_ref());
                let record = record.as_ref();
                let written = rows.write(&[
                    &(line_no as i64),
                    &line,
                    &record.map(|r| r.id.as_str()),
                    &record.and_then(Record::discussion_id),
                    &record.and_then(|r| r.idempotency.as_ref().map(|i| i.key.as_str())),
                ]);
                if let Err(err) = written {
                    failed = Some(err);
                }
            };
            if let Some(boundary) = &boundary {
                imported_line(boundary.trim_end_matches('\n').as_bytes(), false);
            }
            feed(&mut |_, _, line| imported_line(line, true))
                .map_err(|e| Fail::Discuss(Error::io("the import", &e)))?;
            if let Some(err) = failed {
                return Err(Fail::Db(err));
            }
            rows.finish()?;
            save_state(&mut tx, &mut state)?;
            failpoint::hit("append.before_fsync").map_err(|e| self.failed(&e))?;
            tx.commit()?;
            // Ready to serve at once: without statistics, the planner reads
            // a freshly imported table in full until autovacuum analyses it
            // (measured: 365–425 ms a command at a million lines, 24 ms
            // after). A role that does not own the table gets a warning,
            // not an error.
            if imported > 0 {
                client.batch_execute("ANALYZE discuss_lines")?;
            }
            Ok(crate::ledger::import::Imported {
                imported,
                skipped: skip.len() as u64,
            })
        })
    }
}

/// Raises the records' `at_ms` to `newest`, the latest time already
/// numbered, as a writer holding the lock would have stamped them; not
/// past the allowed skew ahead of their own time, which a writer never
/// adopts (`ledger.md`, "Clock skew").
fn keep_time_in_order(records: &mut [Record], newest: Option<i64>) {
    let Some(newest) = newest else { return };
    for record in records {
        if record.at_ms < newest && newest - record.at_ms <= crate::clock::MAX_SKEW_MS {
            record.at_ms = newest;
        }
    }
}

/// The digest of the ledger's last line, which the next line's `prev`
/// names: kept in the state row, or read when an earlier version wrote it.
fn last_line_digest(tx: &mut Transaction<'_>, state: &State) -> Step<chain::Digest> {
    if state.lines == 0 {
        return Ok(chain::before_first_line());
    }
    let kept = || {
        let hex = state.folded.last_line_sha256.as_deref()?;
        chain::parse_hex(hex.as_bytes())
    };
    if let Some(digest) = state.last_digest.or_else(kept) {
        return Ok(digest);
    }
    let row = tx.query_typed_one(
        "SELECT line FROM discuss_lines WHERE line_no = $1",
        &[(&(state.lines as i64), Type::INT8)],
    )?;
    Ok(chain::digest_of(row.get::<_, &[u8]>(0)))
}

/// The rows of the lines an operation appends.
#[derive(Default)]
pub(super) struct LineRows<'a> {
    line_nos: Vec<i64>,
    lines: Vec<&'a [u8]>,
    record_ids: Vec<Option<&'a str>>,
    discussion_ids: Vec<Option<&'a str>>,
    keys: Vec<Option<&'a str>>,
}

/// Numbers lines after the state's last and folds them in.
pub(super) fn fold_lines<'a>(
    state: &mut State,
    items: impl IntoIterator<Item = (&'a [u8], Option<&'a Record>)>,
) -> LineRows<'a> {
    let mut rows = LineRows::default();
    for (line, record) in items {
        let line_no = state.lines + 1;
        state.fold(line_no, line.len(), chain::digest_of(line), record);
        rows.line_nos.push(line_no as i64);
        rows.lines.push(line);
        rows.record_ids.push(record.map(|r| r.id.as_str()));
        rows.discussion_ids
            .push(record.and_then(Record::discussion_id));
        rows.keys
            .push(record.and_then(|r| r.idempotency.as_ref().map(|i| i.key.as_str())));
    }
    rows
}

/// The summaries of the discussions `written` touches, from their
/// records before it (`read`) and after: (ids, settled from, rows).
fn summaries_of(
    summarize: Summarize,
    read: &[Record],
    written: &[Record],
) -> (Vec<String>, Vec<i64>, Vec<String>) {
    let mut touched: Vec<&str> = written.iter().filter_map(Record::discussion_id).collect();
    touched.sort_unstable();
    touched.dedup();
    let mut summaries: (Vec<String>, Vec<i64>, Vec<String>) = Default::default();
    for id in touched {
        let of: Vec<&Record> = read
            .iter()
            .chain(written)
            .filter(|record| record.discussion_id() == Some(id))
            .collect();
        let summary = summarize(id, &of);
        summaries.0.push(id.to_owned());
        summaries.1.push(summary.settled_from_ms);
        summaries.2.push(summary.row);
    }
    summaries
}

/// The lines, the summaries touched and the state row of one operation,
/// in one statement where the state row is there (one round trip to the
/// server instead of three); the state row is written only where it
/// still covers the lines this transaction read.
fn write_operation(
    tx: &mut Transaction<'_>,
    state: &mut State,
    rows: &LineRows<'_>,
    summaries: Option<&(Vec<String>, Vec<i64>, Vec<String>)>,
) -> Step<()> {
    let Some(read) = state.row_lines else {
        // The first write of a database: no state row to update yet.
        insert_lines(tx, rows)?;
        if let Some(summaries) = summaries {
            upsert_summaries(tx, summaries)?;
        }
        return save_state(tx, state);
    };
    let folded = folded_state(state)?;
    let (lines, bytes) = (state.lines as i64, state.bytes as i64);
    let read = read as i64;
    let mut params: Vec<(&(dyn postgres::types::ToSql + Sync), Type)> = vec![
        (&rows.line_nos, Type::INT8_ARRAY),
        (&rows.lines, Type::BYTEA_ARRAY),
        (&rows.record_ids, Type::TEXT_ARRAY),
        (&rows.discussion_ids, Type::TEXT_ARRAY),
        (&rows.keys, Type::TEXT_ARRAY),
        (&lines, Type::INT8),
        (&bytes, Type::INT8),
        (&folded, Type::TEXT),
        (&read, Type::INT8),
    ];
    let statement = match summaries {
        Some((ids, settled, summary_rows)) => {
            params.extend([
                (
                    ids as &(dyn postgres::types::ToSql + Sync),
                    Type::TEXT_ARRAY,
                ),
                (settled, Type::INT8_ARRAY),
                (summary_rows, Type::TEXT_ARRAY),
            ]);
            WRITE_OPERATION_WITH_SUMMARIES
        }
        None => WRITE_OPERATION,
    };
    let updated = tx.execute_typed(statement, &params)?;
    state_saved(updated)
}

fn insert_lines(tx: &mut Transaction<'_>, rows: &LineRows<'_>) -> Step<()> {
    if rows.line_nos.is_empty() {
        return Ok(());
    }
    tx.execute_typed(
        INSERT_LINES,
        &[
            (&rows.line_nos, Type::INT8_ARRAY),
            (&rows.lines, Type::BYTEA_ARRAY),
            (&rows.record_ids, Type::TEXT_ARRAY),
            (&rows.discussion_ids, Type::TEXT_ARRAY),
            (&rows.keys, Type::TEXT_ARRAY),
        ],
    )?;
    Ok(())
}

fn upsert_summaries(
    tx: &mut Transaction<'_>,
    (ids, settled, rows): &(Vec<String>, Vec<i64>, Vec<String>),
) -> Step<()> {
    tx.execute_typed(
        UPSERT_SUMMARIES,
        &[
            (ids, Type::TEXT_ARRAY),
            (settled, Type::INT8_ARRAY),
            (rows, Type::TEXT_ARRAY),
        ],
    )?;
    Ok(())
}

/// The state row's summary: the folded state, as JSON.
fn folded_state(state: &mut State) -> Step<String> {
    if let Some(digest) = state.last_digest {
        state.folded.last_line_sha256 = Some(chain::hex(&digest));
    }
    state.folded.global.forget_old_reservations();
    serde_json::to_string(&state.folded)
        .map_err(|e| Fail::Discuss(Error::new(ErrorCode::Internal, e.to_string())))
}

/// A state row not written (compare and set failed): the second line of
/// defence, after the locks.
fn state_saved(updated: u64) -> Step<()> {
    if updated != 1 {
        return Err(Fail::Discuss(Error::new(
            ErrorCode::IoError,
            "another writer changed the ledger's state at the same moment (the lock was bypassed); nothing was written",
        )));
    }
    Ok(())
}

/// Writes the state row, only where it still covers the lines this
/// transaction read (compare and set: the second line of defence).
pub(super) fn save_state(tx: &mut Transaction<'_>, state: &mut State) -> Step<()> {
    let folded = folded_state(state)?;
    let (lines, bytes) = (state.lines as i64, state.bytes as i64);
    let updated = match state.row_lines {
        Some(read) => tx.execute_typed(
            "UPDATE discuss_state SET lines = $1, bytes = $2, summary = $3 WHERE lines = $4",
            &[
                (&lines, Type::INT8),
                (&bytes, Type::INT8),
                (&folded, Type::TEXT),
                (&(read as i64), Type::INT8),
            ],
        )?,
        None => tx.execute_typed(
            "INSERT INTO discuss_state (format, lines, bytes, summary) VALUES ($1, $2, $3, $4)",
            &[
                (&FORMAT, Type::INT4),
                (&lines, Type::INT8),
                (&bytes, Type::INT8),
                (&folded, Type::TEXT),
            ],
        )?,
    };
    state_saved(updated)
}
