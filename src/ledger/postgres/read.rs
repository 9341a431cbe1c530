//! Reading a PostgreSQL ledger: a consistent snapshot per read (REPEATABLE
//! READ READ ONLY), the state row caught up with lines written after it,
//! its discussions as `mapping` reads them (`PgDiscussions`), the lines
//! checked, streamed and exported.

use super::*;

/// A batch of a stream: its records, where it ends, and whether the rows
/// may go on after it.
struct Batch {
    records: Vec<Record>,
    end: (u64, u64),
    more: bool,
}

/// Every record of `batch` and of the batches `next` reads after it, to
/// `take`; where the last one ends.
fn hand_on(
    mut batch: Batch,
    mut take: impl FnMut(Record, &mut Spent) -> Result<()>,
    spent: &mut Spent,
    mut next: impl FnMut((u64, u64)) -> Result<Batch>,
) -> Result<(u64, u64)> {
    loop {
        for record in batch.records {
            take(record, spent)?;
        }
        if !batch.more {
            return Ok(batch.end);
        }
        batch = next(batch.end)?;
    }
}

impl PgLedger {
    pub(crate) fn view(&self, discussion_ids: &[&str]) -> Result<Excerpt> {
        self.reading(Excerpt::empty, |tx, tables| {
            let mut state = self.state_of(tx, tables.state)?;
            let records = records_of(tx, discussion_ids, state.lines)?;
            Ok(state.view(records, None))
        })
    }

    /// The state row, caught up with the rows after it (the tables are
    /// there: `reading` or `writing` saw to it).
    pub(super) fn state(&self, tx: &mut Transaction<'_>) -> Step<State> {
        let has_state = tables_exist(tx)?.state;
        self.state_of(tx, has_state)
    }

    /// As `state`, for a caller that knows whether the state table is there.
    pub(super) fn state_of(&self, tx: &mut Transaction<'_>, has_state: bool) -> Step<State> {
        // The row and the newest line number in one statement (one round
        // trip: every command reads the state first).
        let row = if has_state {
            tx.query_typed_opt(
                "SELECT format, lines, bytes, summary, \
                 (SELECT coalesce(max(line_no), 0) FROM discuss_lines) FROM discuss_state",
                &[],
            )?
        } else {
            None
        };
        // The lines are the truth: a state row that counts more lines than
        // there are (lines deleted under it) is not believed.
        let newest: i64 = match &row {
            Some(row) => row.get(4),
            None => tx
                .query_typed_one("SELECT coalesce(max(line_no), 0) FROM discuss_lines", &[])?
                .get(0),
        };

        let mut state = State {
            lines: 0,
            bytes: 0,
            folded: Folded::default(),
            row_lines: None,
            dirty: true,
            unfinished: 0,
            last_digest: None,
        };
        if let Some(row) = row {
            let format: i32 = row.get(0);
            if format != FORMAT {
                return Err(Fail::Discuss(self.unreadable(format!(
                    "it holds a ledger of format {format}, this discuss reads format {FORMAT}"
                ))));
            }
            let lines = row.get::<_, i64>(1) as u64;
            state.row_lines = Some(lines);
            // A damaged summary is derived data: it is folded anew; so is
            // one that counts more lines than there are (lines deleted).
            if lines as i64 <= newest
                && let Ok(folded) = serde_json::from_str::<Folded>(row.get(3))
                // Saved by an earlier version, which skipped records
                // this one folds.
                && folded.global.folds_everything()
            {
                state.lines = lines;
                state.bytes = row.get::<_, i64>(2) as u64;
                state.folded = folded;
                state.dirty = false;
            }
        }
        // Normally the row covers every line: nothing to catch up.
        if newest as u64 > state.lines {
            self.catch_up(tx, &mut state, newest as u64)?;
        }
        Ok(state)
    }

    /// Folds in the rows after the state row's, up to line `newest`
    /// (normally none).
    pub(super) fn catch_up(
        &self,
        tx: &mut Transaction<'_>,
        state: &mut State,
        newest: u64,
    ) -> Step<()> {
        let from = state.lines;
        let from_bytes = state.bytes;
        let mut failed = None;
        let streamed = operations_of(
            |line: &mut LineFeed<'_>| {
                Ok(
                    feed_rows(tx, (from, newest), from_bytes, line).unwrap_or_else(|err| {
                        failed = Some(err);
                        (from_bytes, from)
                    }),
                )
            },
            |_, line_no, bytes| {
                let (record, mark) = record_and_mark(line_no, bytes);
                let digest = chain::digest_of(bytes);
                ((line_no, bytes.len(), digest, record), mark)
            },
            |(line_no, len, digest, record)| state.fold(line_no, len, digest, record.as_ref()),
        )
        .map_err(|e| Fail::Discuss(Error::new(ErrorCode::Internal, e.to_string())))?;
        if let Some(err) = failed {
            return Err(Fail::Db(err));
        }
        state.unfinished = streamed.lines.saturating_sub(state.lines);
        Ok(())
    }

    /// Refuses to write after an unfinished operation: in a database only
    /// a hand edit makes one, and lines written after it would be glued on.
    pub(super) fn refuse_unfinished(&self, state: &State) -> Step<()> {
        if state.unfinished == 0 {
            return Ok(());
        }
        Err(Fail::Discuss(self.unreadable(format!(
            "its last {} line(s), after line {}, are an operation cut short, which only a hand edit makes",
            state.unfinished, state.lines
        ))))
    }

    /// The state under a writer's lock, the tables there, ready to be
    /// written after.
    pub(super) fn written_state(&self, tx: &mut Transaction<'_>) -> Step<State> {
        let state = self.state(tx)?;
        self.refuse_unfinished(&state)?;
        Ok(state)
    }

    /// As `written_state`, where every table is known to be there (a
    /// scoped writer checked under its locks).
    pub(super) fn scoped_state(&self, tx: &mut Transaction<'_>) -> Step<State> {
        let state = self.state_of(tx, true)?;
        self.refuse_unfinished(&state)?;
        Ok(state)
    }

    pub(super) fn unreadable(&self, why: String) -> Error {
        Error::new(
            ErrorCode::LedgerUnreadable,
            format!(
                "the database {} is not a ledger this discuss can write: {why}; nothing was written",
                self.location.shown
            ),
        )
        .detail("ledger", self.location.shown.clone())
    }

    /// Runs `read` on the discussions of one snapshot (`mapping`); the
    /// summaries it keeps are written after it (when this role may).
    pub(crate) fn discussions<T>(
        &self,
        empty: impl FnOnce() -> T,
        read: impl FnOnce(&mut PgDiscussions<'_, '_>) -> Step<T>,
    ) -> Result<T> {
        let mut fresh = None;
        let got = self.reading(empty, |tx, tables| {
            let state = self.state_of(tx, tables.state)?;
            let mut discussions = PgDiscussions {
                tx,
                state,
                read_summaries: tables.read_summaries,
                summarize: self.summarize,
                fresh: None,
            };
            let got = read(&mut discussions)?;
            fresh = discussions
                .fresh
                .map(|fresh| (discussions.state.lines, fresh));
            Ok(got)
        })?;
        if let Some((lines, fresh)) = fresh {
            // Speed for the next list only: a role that may only read, or a
            // writer in between, leaves them to another.
            let _ = self.write_summaries(lines, &fresh);
        }
        Ok(got)
    }

    /// Every discussion id, sorted.
    pub(crate) fn discussion_ids(&self) -> Result<Vec<String>> {
        self.reading(Vec::new, |tx, _| {
            let rows = tx.query_typed(
                "SELECT DISTINCT discussion_id FROM discuss_lines \
                 WHERE discussion_id IS NOT NULL ORDER BY 1",
                &[],
            )?;
            Ok(rows.iter().map(|row| row.get(0)).collect())
        })
    }

    /// The discussion ids that start with `prefix`: a range of the index
    /// (ids compare byte by byte, `COLLATE "C"`), not a scan.
    pub(crate) fn discussion_ids_starting(&self, prefix: &str) -> Result<Vec<String>> {
        // Past every id that starts with `prefix`: ids are printable ASCII.
        let beyond = format!("{prefix}\u{7f}");
        self.reading(Vec::new, |tx, _| {
            let rows = tx.query_typed(
                IDS_BETWEEN,
                &[(&prefix, Type::TEXT), (&beyond.as_str(), Type::TEXT)],
            )?;
            Ok(rows
                .iter()
                .map(|row| row.get::<_, String>(0))
                .filter(|id| id.starts_with(prefix))
                .collect())
        })
    }

    /// Every line, checked as `verify` does.
    pub(crate) fn check_lines(
        &self,
        checker: LineChecker,
        progress: impl FnMut(u64, u64),
    ) -> Result<LineCheck> {
        self.reading(LineCheck::default, |tx, tables| {
            let state = self.state_of(tx, tables.state)?;
            let mut failed = None;
            let check = check_lines(
                |line: &mut LineFeed<'_>| {
                    Ok(
                        feed_rows(tx, (0, i64::MAX as u64), 0, line).unwrap_or_else(|err| {
                            failed = Some(err);
                            (0, 0)
                        }),
                    )
                },
                state.bytes,
                checker.clone().of_rows(),
                progress,
            )
            .map_err(|e| Fail::Discuss(Error::new(ErrorCode::Internal, e.to_string())))?;
            if let Some(err) = failed {
                return Err(Fail::Db(err));
            }
            Ok(rows_against_state(check, &state))
        })
    }

    /// The records of whole operations after line `lines` (whose bytes end
    /// at `bytes`), in order, to `take`; where they end. Read in batches,
    /// each from its own snapshot, and handed on with the connection free:
    /// `take` may read the ledger itself (`events` does). A command's
    /// stream of many batches reads the next one on a second connection
    /// and core while `take` works through this one (the server and the
    /// reader took turns: `events --json` of a million records took 4.7 s).
    pub(crate) fn stream_records(
        &self,
        from: (u64, u64),
        take: impl FnMut(Record, &mut Spent) -> Result<()>,
    ) -> Result<(u64, u64)> {
        let batch = self.batch_after(from)?;
        if batch.more && self.read_ahead {
            return std::thread::scope(|scope| {
                // The next batch is handed over when this one is done:
                // two in memory at most.
                let (send, receive) = std::sync::mpsc::sync_channel::<Result<Batch>>(0);
                let mut at = batch.end;
                // What `take` is done with is dropped on the thread that
                // parsed most of it.
                let (mut spent, home) = Spent::sent_home();
                scope.spawn(move || {
                    loop {
                        home.drop_returned();
                        let next = self.batch_after(at);
                        let more = next.as_ref().is_ok_and(|next| next.more);
                        if let Ok(next) = &next {
                            at = next.end;
                        }
                        // A reader that stopped (`take` failed) ends this.
                        if send.send(next).is_err() || !more {
                            return;
                        }
                    }
                });
                hand_on(batch, take, &mut spent, |_| {
                    receive.recv().map_err(|_| {
                        Error::new(ErrorCode::Internal, "the ledger's reader stopped")
                    })?
                })
            });
        }
        hand_on(batch, take, &mut Spent::here(), |end| self.batch_after(end))
    }

    /// The records of whole operations in the batch of rows after
    /// position `(bytes, lines)`, read in one snapshot.
    fn batch_after(&self, (bytes, lines): (u64, u64)) -> Result<Batch> {
        self.reading(
            || Batch {
                records: Vec::new(),
                end: (bytes, lines),
                more: false,
            },
            |tx, _| {
                let rows = tx.query_typed(
                    STREAM,
                    &[
                        (&(lines as i64), Type::INT8),
                        (&self.stream_batch, Type::INT8),
                    ],
                )?;
                let mut records = Vec::new();
                let streamed = operations_of(
                    |line: &mut LineFeed<'_>| {
                        let (mut at, mut count) = (bytes, lines);
                        for row in &rows {
                            let text: &[u8] = row.get(1);
                            count = row.get::<_, i64>(0) as u64;
                            line(at, count, text);
                            at += text.len() as u64 + 1;
                        }
                        Ok((at, count))
                    },
                    |_, line_no, line| record_and_mark(line_no, line),
                    |record| records.extend(record),
                )
                .map_err(|e| Fail::Discuss(Error::new(ErrorCode::Internal, e.to_string())))?;
                Ok(Batch {
                    records,
                    end: (streamed.end, streamed.lines),
                    more: rows.len() as i64 == self.stream_batch && streamed.lines > lines,
                })
            },
        )
    }

    /// Where to stream from to get every record after line `after`: just
    /// before the whole operation that holds it (a stream skips what it
    /// reads up to `after`). Only the line count matters to a database's
    /// stream; its byte count is left at 0.
    pub(crate) fn position_of_line(&self, after: u64) -> Result<(u64, u64)> {
        if after == 0 {
            return Ok((0, 0));
        }
        self.reading(
            || (0, 0),
            |tx, _| {
                // An operation is a few lines: its first is among these.
                let rows = tx.query_typed(
                    "SELECT line_no, line FROM discuss_lines WHERE line_no <= $1 \
                     ORDER BY line_no DESC LIMIT 16",
                    &[(&(after as i64), Type::INT8)],
                )?;
                for row in &rows {
                    let line_no = row.get::<_, i64>(0) as u64;
                    let record = Record::parse(row.get(1), line_no as usize);
                    if record.is_ok_and(|record| record.op_id.is_none()) {
                        return Ok((0, line_no - 1));
                    }
                }
                Ok((0, 0))
            },
        )
    }

    /// How many lines there are: it changes with every write.
    pub(crate) fn version(&self) -> Result<u64> {
        self.reading(
            || 0,
            |tx, _| {
                let row =
                    tx.query_typed_one("SELECT coalesce(max(line_no), 0) FROM discuss_lines", &[])?;
                Ok(row.get::<_, i64>(0) as u64)
            },
        )
    }

    /// Whether the first write has made the tables.
    pub(crate) fn exists(&self) -> Result<bool> {
        self.reading(|| false, |_, _| Ok(true))
    }

    /// How many lines (an unfinished last operation's too), and their
    /// bytes as a file would hold them.
    pub(crate) fn counts(&self) -> Result<(u64, u64)> {
        self.reading(
            || (0, 0),
            |tx, tables| {
                let state = self.state_of(tx, tables.state)?;
                Ok((state.lines + state.unfinished, state.bytes))
            },
        )
    }

    /// Writes every line, with its `\n`, in ledger order; how many.
    pub(crate) fn export(&self, out: &mut dyn Write) -> Result<u64> {
        self.reading(
            || 0,
            |tx, _| {
                let mut rows = tx.query_typed_raw(
                    "SELECT line FROM discuss_lines ORDER BY line_no",
                    std::iter::empty::<(&(dyn ToSql + Sync), Type)>(),
                )?;
                let mut count = 0u64;
                while let Some(row) = rows.next()? {
                    let line: &[u8] = row.get(0);
                    out.write_all(line)
                        .and_then(|()| out.write_all(b"\n"))
                        .map_err(|e| Fail::Discuss(Error::io("the export", &e)))?;
                    count += 1;
                }
                Ok(count)
            },
        )
    }
}

/// The discussions of one snapshot of a database (`mapping::Discussions`).
pub(crate) struct PgDiscussions<'t, 'c> {
    tx: &'t mut Transaction<'c>,
    state: State,
    read_summaries: bool,
    summarize: Option<Summarize>,
    /// The summaries kept, written once the snapshot is read.
    fresh: Option<Vec<SummaryLine>>,
}

impl Discussions for PgDiscussions<'_, '_> {
    type Stop = Fail;

    fn newest(&self) -> Option<i64> {
        self.state.folded.last_at_ms
    }

    fn live(&self, now_ms: i64) -> Option<Vec<String>> {
        let ids = self.state.folded.live.candidates(now_ms)?;
        Some(ids.into_iter().map(str::to_owned).collect())
    }

    fn each_of(&mut self, ids: &[&str], each: &mut dyn FnMut(&str, &[&Record])) -> Step<()> {
        let records = records_of(self.tx, ids, self.state.lines)?;
        for &id in ids {
            let of: Vec<&Record> = records
                .iter()
                .filter(|r| r.discussion_id() == Some(id))
                .collect();
            if !of.is_empty() {
                each(id, &of);
            }
        }
        Ok(())
    }

    /// Each discussion ends at its last row (the database counts them
    /// first); a checked pass also holds the rows against the state row.
    fn each(
        &mut self,
        checker: Option<LineChecker>,
        each: &mut dyn FnMut(&str, &[&Record]),
    ) -> Step<Option<LineCheck>> {
        let covered = (self.state.lines, self.state.bytes);
        let checker = checker.map(LineChecker::of_rows);
        let check = rows_in_line_order(self.tx, covered, checker, each)?;
        Ok(check.map(|check| rows_against_state(check, &self.state)))
    }

    fn summarize(&self) -> Option<Summarize> {
        self.summarize
    }

    fn kept(
        &mut self,
        row: &mut dyn FnMut(&str, i64, &str) -> std::result::Result<(), Untrusted>,
    ) -> Step<std::result::Result<Vec<String>, Untrusted>> {
        // Kept rows hold only when they cover every line (writers keep
        // them so); none are touched since.
        if self.state.folded.summarized != self.state.lines || !self.read_summaries {
            return Ok(Err(Untrusted));
        }
        let mut rows = self.tx.query_typed_raw(
            "SELECT discussion_id, settled_from_ms, row FROM discuss_summaries",
            std::iter::empty::<(&(dyn ToSql + Sync), Type)>(),
        )?;
        while let Some(kept) = rows.next()? {
            if row(kept.get(0), kept.get(1), kept.get(2)).is_err() {
                return Ok(Err(Untrusted));
            }
        }
        Ok(Ok(Vec::new()))
    }

    fn keep(&mut self, lines: &mut dyn Iterator<Item = SummaryLine>) {
        self.fresh = Some(lines.collect());
    }
}

/// One read of the rows in line order, parsed on both cores: every
/// discussion among the first `covered` lines (`bytes` of them) goes to
/// `each` at its last row (the database counts them first), so memory
/// holds the discussions under way at one point of the ledger, not the
/// ledger. With a `checker`, every row is checked too, the last ones
/// after `covered` included, and what it found is returned.
fn rows_in_line_order(
    tx: &mut Transaction<'_>,
    (covered, bytes): (u64, u64),
    checker: Option<LineChecker>,
    each: impl FnMut(&str, &[&Record]),
) -> Step<Option<LineCheck>> {
    let ends = last_line_of_each(tx, covered)?;
    let pass = OnePass::new(|id: &str| ends.get(id).copied(), covered);
    let upto = if checker.is_some() {
        i64::MAX as u64
    } else {
        covered
    };
    let mut failed = None;
    let feed = |line: &mut LineFeed<'_>| {
        Ok(feed_rows(tx, (0, upto), 0, line).unwrap_or_else(|err| {
            failed.get_or_insert(err);
            (0, 0)
        }))
    };
    let found = in_line_order(bytes, feed, pass, checker, each);
    if let Some(err) = failed {
        return Err(Fail::Db(err));
    }
    found.map_err(|failed| match failed {
        PassFailed::Read(err) => Fail::Discuss(Error::new(ErrorCode::Internal, err.to_string())),
        PassFailed::Misindexed => Fail::Discuss(Error::new(
            ErrorCode::Internal,
            "a discussion has a row after its last one in the same snapshot",
        )),
    })
}

/// The rows as the state row saw them when the last line was written: a
/// row edited in the database since (by hand, past `discuss`) holds other
/// bytes than the state counted, and its last line another digest than the
/// state kept. Said at the line concerned, as a finding, with the chain's
/// own findings (which name the line after an edited one).
fn rows_against_state(mut check: LineCheck, state: &State) -> LineCheck {
    let covers_every_row = state.row_lines == Some(state.lines) && !state.dirty;
    if !covers_every_row || state.lines == 0 {
        return check;
    }
    let line = state.lines;
    let kept = state.folded.last_line_sha256.as_deref();
    if let (Some(kept), Some(last)) = (kept, check.chain.last_sha256.as_deref())
        && kept != last
    {
        check.findings.push(LineFinding {
            kind: "chain_broken",
            line,
            detail: format!(
                "the last row hashes to sha256:{last}, where the ledger's state kept sha256:{kept} when it was written: the row was edited in the database"
            ),
        });
    }
    if check.bytes != state.bytes {
        check.findings.push(LineFinding {
            kind: "rows_edited",
            line,
            detail: format!(
                "the rows hold {} bytes where the ledger's state counted {} when line {line} was written: a row was edited in the database",
                check.bytes, state.bytes
            ),
        });
    }
    check.findings.sort_by_key(|f| f.line);
    check
}

/// Each discussion's last line among the first `covered`.
fn last_line_of_each(tx: &mut Transaction<'_>, covered: u64) -> Step<HashMap<String, u64>> {
    let mut ends = HashMap::new();
    let mut rows = tx.query_typed_raw(
        LAST_LINE_OF_EACH,
        [(&(covered as i64) as &(dyn ToSql + Sync), Type::INT8)],
    )?;
    while let Some(row) = rows.next()? {
        ends.insert(
            row.get::<_, &str>(0).to_owned(),
            row.get::<_, i64>(1) as u64,
        );
    }
    Ok(ends)
}

/// Hands the rows after line `after` up to line `upto` to `line`, with
/// the byte offsets they would have in a file whose first `bytes` bytes
/// come before them. The range is bounded at both ends, so that it is an
/// index range on any plan, with statistics or without (right after an
/// import, before anything analysed the table).
pub(super) fn feed_rows(
    tx: &mut Transaction<'_>,
    (after, upto): (u64, u64),
    bytes: u64,
    line: &mut LineFeed<'_>,
) -> std::result::Result<(u64, u64), postgres::Error> {
    let (after, upto) = (after as i64, upto as i64);
    let mut rows = tx.query_typed_raw(
        CATCH_UP,
        [
            (&after as &(dyn ToSql + Sync), Type::INT8),
            (&upto as &(dyn ToSql + Sync), Type::INT8),
        ],
    )?;
    let (mut at, mut count) = (bytes, after as u64);
    while let Some(row) = rows.next()? {
        let line_no: i64 = row.get(0);
        let bytes: &[u8] = row.get(1);
        // A row number skipped (a hand edit) keeps its place in the order.
        count = line_no as u64;
        line(at, count, bytes);
        at += bytes.len() as u64 + 1;
    }
    Ok((at, count))
}

/// The records of `discussion_ids` among the first `covered` lines.
pub(super) fn records_of(
    tx: &mut Transaction<'_>,
    discussion_ids: &[&str],
    covered: u64,
) -> Step<Vec<Record>> {
    if discussion_ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut ids = discussion_ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let rows = tx.query_typed(
        RECORDS_OF,
        &[(&ids, Type::TEXT_ARRAY), (&(covered as i64), Type::INT8)],
    )?;
    Ok(rows
        .iter()
        .filter_map(|row| Record::parse(row.get(1), row.get::<_, i64>(0) as usize).ok())
        .filter(|record| record.discussion_id().is_some_and(|id| ids.contains(&id)))
        .collect())
}

/// The first record that carries `key` and the records of its discussion.
pub(super) fn keyed_of(tx: &mut Transaction<'_>, key: &str, covered: u64) -> Step<Option<Keyed>> {
    let rows = tx.query_typed(
        KEYED,
        &[(&key, Type::TEXT), (&(covered as i64), Type::INT8)],
    )?;
    let first = rows
        .iter()
        .filter_map(|row| Record::parse(row.get(1), row.get::<_, i64>(0) as usize).ok())
        .find(|record| record.idempotency.as_ref().is_some_and(|i| i.key == key));
    let Some(first) = first else {
        return Ok(None);
    };
    let discussion = match first.discussion_id() {
        Some(id) => records_of(tx, &[id], covered)?,
        None => Vec::new(),
    };
    Ok(Some(Keyed { first, discussion }))
}
