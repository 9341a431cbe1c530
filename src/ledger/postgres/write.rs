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
            let (records, result) = planned?;
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
            }
            failpoint::hit("append.before_write").map_err(|e| self.failed(&e))?;
            let text = Record::operation_lines(&records);
            let lines = text.as_bytes().split(|b| *b == b'\n');
            let complete = state.folded.summarized == state.lines;
            insert_lines(&mut tx, &mut state, lines.zip(records.iter().map(Some)))?;
            // The summaries stay complete when they were: those of the
            // discussions this operation touched are written with it.
            if let (Some(summarize), true) = (self.summarize, complete && keeps_summaries) {
                let mut touched: Vec<&str> =
                    records.iter().filter_map(Record::discussion_id).collect();
                touched.sort_unstable();
                touched.dedup();
                if !touched.is_empty() {
                    upsert_summaries(&mut tx, summarize, &touched, state.lines)?;
                }
                state.folded.summarized = state.lines;
            }
            save_state(&mut tx, &mut state)?;
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
    pub(super) fn write_summaries(&self, lines: u64, fresh: &[(String, Summary)]) -> Result<()> {
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
                let ids: Vec<&str> = batch.iter().map(|(id, _)| id.as_str()).collect();
                let settled: Vec<i64> = batch.iter().map(|(_, s)| s.settled_from_ms).collect();
                let rows: Vec<&str> = batch.iter().map(|(_, s)| s.row.as_str()).collect();
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
            feed(&mut |_, _, line| {
                if failed.is_some() {
                    return;
                }
                imported += 1;
                let line_no = state.lines + 1;
                let record = Record::parse(line, line_no as usize).ok();
                state.fold(line_no, line.len(), record.as_ref());
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
            })
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

/// Writes the summaries of `ids` (their records among the first `covered`
/// lines, this transaction's own included).
pub(super) fn upsert_summaries(
    tx: &mut Transaction<'_>,
    summarize: Summarize,
    ids: &[&str],
    covered: u64,
) -> Step<()> {
    let mut summarized: (Vec<&str>, Vec<i64>, Vec<String>) = Default::default();
    each_of(tx, ids, covered, |id, records| {
        let summary = summarize(id, records);
        summarized.0.push(id);
        summarized.1.push(summary.settled_from_ms);
        summarized.2.push(summary.row);
    })?;
    tx.execute_typed(
        UPSERT_SUMMARIES,
        &[
            (&summarized.0, Type::TEXT_ARRAY),
            (&summarized.1, Type::INT8_ARRAY),
            (&summarized.2, Type::TEXT_ARRAY),
        ],
    )?;
    Ok(())
}

/// Inserts lines after the state's last, numbering them on, and folds
/// them in; one statement for all of them.
pub(super) fn insert_lines<'a>(
    tx: &mut Transaction<'_>,
    state: &mut State,
    items: impl IntoIterator<Item = (&'a [u8], Option<&'a Record>)>,
) -> Step<()> {
    let mut line_nos: Vec<i64> = Vec::new();
    let mut lines: Vec<&[u8]> = Vec::new();
    let mut record_ids: Vec<Option<&str>> = Vec::new();
    let mut discussion_ids: Vec<Option<&str>> = Vec::new();
    let mut keys: Vec<Option<&str>> = Vec::new();
    for (line, record) in items {
        let line_no = state.lines + 1;
        state.fold(line_no, line.len(), record);
        line_nos.push(line_no as i64);
        lines.push(line);
        record_ids.push(record.map(|r| r.id.as_str()));
        discussion_ids.push(record.and_then(Record::discussion_id));
        keys.push(record.and_then(|r| r.idempotency.as_ref().map(|i| i.key.as_str())));
    }
    if line_nos.is_empty() {
        return Ok(());
    }
    tx.execute_typed(
        INSERT_LINES,
        &[
            (&line_nos, Type::INT8_ARRAY),
            (&lines, Type::BYTEA_ARRAY),
            (&record_ids, Type::TEXT_ARRAY),
            (&discussion_ids, Type::TEXT_ARRAY),
            (&keys, Type::TEXT_ARRAY),
        ],
    )?;
    Ok(())
}

/// Writes the state row, only where it still covers the lines this
/// transaction read (compare and set: the second line of defence).
pub(super) fn save_state(tx: &mut Transaction<'_>, state: &mut State) -> Step<()> {
    state.folded.global.forget_old_reservations();
    let folded = serde_json::to_string(&state.folded)
        .map_err(|e| Fail::Discuss(Error::new(ErrorCode::Internal, e.to_string())))?;
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
    if updated != 1 {
        return Err(Fail::Discuss(Error::new(
            ErrorCode::IoError,
            "another writer changed the ledger's state at the same moment (the lock was bypassed); nothing was written",
        )));
    }
    Ok(())
}
