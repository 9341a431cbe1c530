//! The ledger in PostgreSQL, for fleets that span hosts: the very same v1
//! lines, one row a line, numbered in one total order.
//!
//! Two tables, made by the first write to an empty database:
//!
//! - `discuss_lines`: `line_no` (1, 2, 3… the ledger's order, the primary
//!   key), `line` (the bytes as written, without `\n`), and three columns
//!   taken from the record for lookups: `record_id`, `discussion_id`,
//!   `idempotency_key` (NULL on a line that is not a record).
//! - `discuss_state`: one row, derived like a file ledger's checkpoint:
//!   how many lines and bytes it covers, and the fold of the global state
//!   (fleets, kill-switch, quotas, the last hour of wakes), the newest
//!   `at_ms` and the live set, as JSON. Each writer updates it in its own
//!   transaction; rows after it (written by other means) are folded in on
//!   reading, as a file's cache catches up.
//!
//! **Why the writers' guarantees hold.** Every write — an operation of one
//! to three lines, or an import — is one transaction that first takes
//! `pg_advisory_xact_lock(LOCK_KEY)`. Only one transaction holds it at a
//! time, and it is released only at COMMIT or ROLLBACK, after the commit
//! is visible. Every statement after the lock runs in READ COMMITTED, so
//! it sees every operation committed before the lock was granted: the
//! writer reads the ledger, checks the head, the kill-switch and the
//! hourly quota, and appends, with no other write in between — the same
//! read-validate-append step the file's exclusive `flock` makes. Hence one
//! winner per head, a quota never exceeded by wakers racing on separate
//! connections or hosts, and an engaged kill-switch seen by the next
//! write. A client killed or cut off mid-transaction has its transaction
//! rolled back by the server, which frees the lock; nothing of it remains.
//! Success is reported only once COMMIT has returned, i.e. once the server
//! has made it durable (`synchronous_commit`).
//!
//! **The second line of defence.** Should the lock ever be bypassed (a
//! pooler that breaks transactions, another tool), two writers that read
//! the same ledger would both number their lines from the same `line_no`:
//! the primary key lets only the first commit, and the state row is only
//! updated where it still covers the lines the writer read (compare and
//! set), so the second fails with nothing written.
//!
//! Readers take no lock: each reads in one REPEATABLE READ READ ONLY
//! transaction, a consistent snapshot, and never waits for a writer.
//!
//! Every statement is sent with its parameter types (`query_typed`): one
//! round trip each, no named prepared statement left on the server (so a
//! pooler in transaction mode needs no support for them).

mod location;

pub(super) use location::{Location, is_postgres_url};

use super::check::{LineCheck, check_lines};
use super::failpoint;
use super::lines::{LineFeed, operations_of, record_and_mark};
use super::summary::{Summarize, Summary, Untrusted};
use super::view::{Keyed, Plan, View};
use crate::error::{Error, ErrorCode, Result};
use crate::global::Global;
use crate::ledger::live::LiveSet;
use crate::record::Record;
use postgres::error::SqlState;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{ToSql, Type};
use postgres::{Client, IsolationLevel, Transaction};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

/// The advisory lock every writer of a database takes: "discuss1".
const LOCK_KEY: i64 = 0x6469_7363_7573_7331;

/// The format the tables hold; a database of another is refused.
const FORMAT: i32 = 1;

/// Rows read at a time by `stream_records`.
const STREAM_BATCH: i64 = 10_000;

/// Rows inserted by one statement during an import.
const IMPORT_BATCH: usize = 5_000;

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS discuss_lines (
    line_no bigint PRIMARY KEY CHECK (line_no > 0),
    line bytea NOT NULL,
    record_id text COLLATE "C",
    discussion_id text COLLATE "C",
    idempotency_key text COLLATE "C"
);
CREATE INDEX IF NOT EXISTS discuss_lines_by_discussion
    ON discuss_lines (discussion_id, line_no) WHERE discussion_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS discuss_lines_by_idempotency_key
    ON discuss_lines (idempotency_key, line_no) WHERE idempotency_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS discuss_state (
    one_row boolean PRIMARY KEY DEFAULT true CHECK (one_row),
    format integer NOT NULL,
    lines bigint NOT NULL,
    bytes bigint NOT NULL,
    summary text NOT NULL
);
INSERT INTO discuss_state (format, lines, bytes, summary)
    VALUES (1, 0, 0, '{}') ON CONFLICT DO NOTHING;
"#;

/// What lists read instead of deriving every discussion (the file cache's
/// `<ledger>.summary`): a discussion's row once settled, and the instant it
/// is settled from. Writers keep the rows of the discussions they touch;
/// made on a database of an earlier version by its next write.
const SUMMARIES: &str = r#"
CREATE TABLE IF NOT EXISTS discuss_summaries (
    discussion_id text COLLATE "C" PRIMARY KEY,
    settled_from_ms bigint NOT NULL,
    row text NOT NULL
);
"#;

const UPSERT_SUMMARIES: &str = "INSERT INTO discuss_summaries (discussion_id, settled_from_ms, row) \
    SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[]) \
    ON CONFLICT (discussion_id) DO UPDATE \
    SET settled_from_ms = EXCLUDED.settled_from_ms, row = EXCLUDED.row";

const INSERT_LINES: &str = "INSERT INTO discuss_lines \
    (line_no, line, record_id, discussion_id, idempotency_key) \
    SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::text[], $4::text[], $5::text[])";

/// A ledger in a PostgreSQL database, reached through one connection
/// opened on first use and kept for the process.
pub(crate) struct PgLedger {
    location: Location,
    client: Mutex<Option<Client>>,
    /// With it, writers keep `discuss_summaries` and lists read it.
    summarize: Option<Summarize>,
}

impl Clone for PgLedger {
    fn clone(&self) -> Self {
        PgLedger {
            summarize: self.summarize,
            ..PgLedger::new(self.location.clone())
        }
    }
}

impl std::fmt::Debug for PgLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgLedger({})", self.location.shown)
    }
}

/// What the state row holds besides its counts (its `summary` column).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
struct Folded {
    last_at_ms: Option<i64>,
    global: Global,
    live: LiveSet,
    /// The lines `discuss_summaries` is complete for: when they are all the
    /// lines, lists read it; 0 before it is first written.
    summarized: u64,
}

/// The ledger as one transaction sees it: the lines covered and their
/// fold.
#[derive(Debug)]
struct State {
    lines: u64,
    bytes: u64,
    folded: Folded,
    /// The lines the state row said it covered when read; `None` when
    /// there was no row.
    row_lines: Option<u64>,
    /// Whether the fold differs from the row's.
    dirty: bool,
    /// Lines after the last whole operation (only a hand edit makes them).
    unfinished: u64,
}

impl State {
    fn fold(&mut self, line_no: u64, len: usize, record: Option<&Record>) {
        self.dirty = true;
        self.lines = line_no;
        self.bytes += len as u64 + 1;
        let Some(record) = record else { return };
        if let Some(id) = record.discussion_id() {
            self.folded.live.touch(id, record.at_ms);
        }
        self.folded.global.apply(record);
        self.folded.last_at_ms = Some(
            self.folded
                .last_at_ms
                .map_or(record.at_ms, |t| t.max(record.at_ms)),
        );
    }

    fn view(&mut self, records: Vec<Record>, keyed: Option<Keyed>) -> View {
        View {
            global: std::mem::take(&mut self.folded.global),
            last_at_ms: self.folded.last_at_ms,
            records,
            keyed,
        }
    }
}

/// A failure inside a session: the database's, or the command's own.
enum Fail {
    Db(postgres::Error),
    Discuss(Error),
}

impl From<postgres::Error> for Fail {
    fn from(err: postgres::Error) -> Self {
        Fail::Db(err)
    }
}

impl From<Error> for Fail {
    fn from(err: Error) -> Self {
        Fail::Discuss(err)
    }
}

type Step<T> = std::result::Result<T, Fail>;

impl PgLedger {
    pub(crate) fn new(location: Location) -> PgLedger {
        PgLedger {
            location,
            client: Mutex::new(None),
            summarize: None,
        }
    }

    /// Keeps a summary of every discussion, made by `summarize`.
    pub(crate) fn summarize_with(mut self, summarize: Summarize) -> Self {
        self.summarize = Some(summarize);
        self
    }

    /// The URL as given: what a supervised child gets as `DISCUSS_LEDGER`.
    pub(crate) fn url(&self) -> &str {
        &self.location.url
    }

    /// The URL with its password hidden, for people.
    pub(crate) fn shown(&self) -> &str {
        &self.location.shown
    }

    /// Runs `work` on the connection, opening it first if need be. A
    /// connection that broke is dropped, so the next call opens another.
    fn session<T>(&self, work: impl FnOnce(&mut Client) -> Step<T>) -> Result<T> {
        let mut slot = self.client.lock().unwrap_or_else(|e| e.into_inner());
        let client = match slot.take() {
            Some(client) if !client.is_closed() => slot.insert(client),
            _ => slot.insert(self.connect()?),
        };
        match work(client) {
            Ok(done) => Ok(done),
            Err(Fail::Discuss(err)) => Err(err),
            Err(Fail::Db(err)) => {
                if client.is_closed() || err.as_db_error().is_none() {
                    *slot = None;
                }
                Err(self.db_error(&err))
            }
        }
    }

    /// `session` for a write: a failure to reach or use the database says
    /// that nothing was written (a reader's says nothing of writes).
    fn writing_session<T>(&self, work: impl FnOnce(&mut Client) -> Step<T>) -> Result<T> {
        self.session(work).map_err(|mut err| {
            let lost = matches!(err.code, ErrorCode::LedgerUnavailable | ErrorCode::IoError);
            if lost && !err.message.contains("nothing was written") {
                err.message.push_str("; nothing was written");
            }
            err
        })
    }

    /// A new connection, within `connect_timeout` from start to finish:
    /// the client bounds only the TCP connect with it, and a server that
    /// accepts but never answers would otherwise hang the command.
    fn connect(&self) -> Result<Client> {
        let config = self.location.config.clone();
        let tls = self.location.tls();
        let limit = config
            .get_connect_timeout()
            .copied()
            .unwrap_or(Duration::from_secs(
                location::DEFAULT_CONNECT_TIMEOUT_S.into(),
            ));
        let (sender, answer) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = sender.send(config.connect(tls));
        });
        match answer.recv_timeout(limit) {
            // Refused at the door (no such database or role, pg_hba.conf,
            // TLS) is as unreachable as a server that is down.
            Ok(connected) => connected.map_err(|e| self.unavailable(&e)),
            // The thread is left to the server's answer or the process's end.
            Err(_) => Err(Error::new(
                ErrorCode::LedgerUnavailable,
                format!(
                    "the ledger database {} did not answer within {} s",
                    self.location.shown,
                    limit.as_secs_f64()
                ),
            )
            .detail("ledger", self.location.shown.clone())
            .hint("check that the server is up and reachable; connect_timeout=N in the URL sets the wait")),
        }
    }

    /// `ledger_unavailable` for a database that cannot be reached or was
    /// lost mid-operation; `io_error` for one that refused a statement.
    fn db_error(&self, err: &postgres::Error) -> Error {
        let shown = self.location.shown.clone();
        // Connection exceptions (08), operator intervention such as a
        // server shutting down (57), and exhausted resources (53): the
        // database is not there to write to, whatever it said on the way.
        let gone = err
            .as_db_error()
            .is_some_and(|db| matches!(db.code().code().get(..2), Some("08" | "57" | "53")));
        if let Some(db) = err.as_db_error().filter(|_| !gone) {
            let conflict = *db.code() == SqlState::UNIQUE_VIOLATION;
            let message = if conflict {
                format!(
                    "another writer appended to {shown} at the same moment (the lock was bypassed); nothing was written: {}",
                    db.message()
                )
            } else {
                format!(
                    "the database {shown} refused the operation: {}",
                    db.message()
                )
            };
            return Error::new(ErrorCode::IoError, message)
                .detail("ledger", shown)
                .detail("sqlstate", db.code().code())
                .hint("the role needs SELECT, INSERT and UPDATE on discuss_lines and discuss_state (and CREATE for the first write); see docs/scale-out.md");
        }
        self.unavailable(err)
    }

    fn unavailable(&self, err: &postgres::Error) -> Error {
        let shown = self.location.shown.clone();
        let mut why = err.to_string();
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            let text = cause.to_string();
            if !why.contains(&text) {
                why.push_str(": ");
                why.push_str(&text);
            }
            source = cause.source();
        }
        Error::new(
            ErrorCode::LedgerUnavailable,
            format!("the ledger database {shown} cannot be reached ({why})"),
        )
        .detail("ledger", shown)
        .hint("check the URL, that the server is up and accepts this host and role; connect_timeout=N in the URL bounds the wait (default 5 s)")
    }

    /// A consistent snapshot for readers.
    fn read_only(client: &mut Client) -> Step<Transaction<'_>> {
        Ok(client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?)
    }

    /// Runs `read` in one read-only snapshot, where the tables are there;
    /// `empty()` before the first write made them.
    fn reading<T>(
        &self,
        empty: impl FnOnce() -> T,
        read: impl FnOnce(&mut Transaction<'_>) -> Step<T>,
    ) -> Result<T> {
        self.session(|client| {
            let mut tx = Self::read_only(client)?;
            if !tables_exist(&mut tx)?.ledger {
                return Ok(empty());
            }
            let got = read(&mut tx)?;
            tx.commit()?;
            Ok(got)
        })
    }

    /// A writer's transaction, holding the ledger's lock, with the tables
    /// made if this is the first write (the summaries' too, where this role
    /// may); and whether it may keep the summaries.
    fn writing(client: &mut Client) -> Step<(Transaction<'_>, bool)> {
        let mut tx = client.transaction()?;
        tx.execute_typed(
            "SELECT pg_advisory_xact_lock($1)",
            &[(&LOCK_KEY, Type::INT8)],
        )?;
        let tables = tables_exist(&mut tx)?;
        if !tables.ledger || !tables.state {
            // Every statement of the schema is "if not exists": a dropped
            // state table is made again, and folded anew from the lines.
            tx.batch_execute(SCHEMA)?;
        }
        if !tables.summaries && tables.write_summaries {
            tx.batch_execute(SUMMARIES)?;
        }
        Ok((tx, tables.write_summaries))
    }

    /// As `writing`, but `None` at once when another transaction holds
    /// the ledger's lock (for readers that would write what they derived).
    fn writing_unless_busy(client: &mut Client) -> Step<Option<(Transaction<'_>, bool)>> {
        let mut tx = client.transaction()?;
        let locked: bool = tx
            .query_typed_one(
                "SELECT pg_try_advisory_xact_lock($1)",
                &[(&LOCK_KEY, Type::INT8)],
            )?
            .get(0);
        if !locked {
            tx.rollback()?;
            return Ok(None);
        }
        let tables = tables_exist(&mut tx)?;
        if !tables.ledger {
            return Ok(None);
        }
        if !tables.summaries && tables.write_summaries {
            tx.batch_execute(SUMMARIES)?;
        }
        Ok(Some((tx, tables.write_summaries)))
    }

    pub(crate) fn view(&self, discussion_ids: &[&str]) -> Result<View> {
        self.reading(View::empty, |tx| {
            let mut state = self.state(tx)?;
            let records = records_of(tx, discussion_ids, state.lines)?;
            Ok(state.view(records, None))
        })
    }

    /// The state row, caught up with the rows after it (the tables are
    /// there: `reading` or `writing` saw to it).
    fn state(&self, tx: &mut Transaction<'_>) -> Step<State> {
        let row = if tables_exist(tx)?.state {
            tx.query_typed_opt(
                "SELECT format, lines, bytes, summary FROM discuss_state",
                &[],
            )?
        } else {
            None
        };
        // The lines are the truth: a state row that counts more lines than
        // there are (lines deleted under it) is not believed.
        let newest: i64 = tx
            .query_typed_one("SELECT coalesce(max(line_no), 0) FROM discuss_lines", &[])?
            .get(0);

        let mut state = State {
            lines: 0,
            bytes: 0,
            folded: Folded::default(),
            row_lines: None,
            dirty: true,
            unfinished: 0,
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
                && let Ok(folded) = serde_json::from_str(row.get(3))
            {
                state.lines = lines;
                state.bytes = row.get::<_, i64>(2) as u64;
                state.folded = folded;
                state.dirty = false;
            }
        }
        self.catch_up(tx, &mut state)?;
        Ok(state)
    }

    /// Folds in the rows after the state row's (normally none).
    fn catch_up(&self, tx: &mut Transaction<'_>, state: &mut State) -> Step<()> {
        let from = state.lines;
        let from_bytes = state.bytes;
        let mut failed = None;
        let streamed = operations_of(
            |line: &mut LineFeed<'_>| {
                Ok(feed_rows(tx, from, from_bytes, line).unwrap_or_else(|err| {
                    failed = Some(err);
                    (from_bytes, from)
                }))
            },
            |_, line_no, bytes| {
                let (record, mark) = record_and_mark(line_no, bytes);
                ((line_no, bytes.len(), record), mark)
            },
            |(line_no, len, record)| state.fold(line_no, len, record.as_ref()),
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
    fn refuse_unfinished(&self, state: &State) -> Step<()> {
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
    fn written_state(&self, tx: &mut Transaction<'_>) -> Step<State> {
        let state = self.state(tx)?;
        self.refuse_unfinished(&state)?;
        Ok(state)
    }

    fn unreadable(&self, why: String) -> Error {
        Error::new(
            ErrorCode::LedgerUnreadable,
            format!(
                "the database {} is not a ledger this discuss can write: {why}; nothing was written",
                self.location.shown
            ),
        )
        .detail("ledger", self.location.shown.clone())
    }

    pub(crate) fn append_keyed<T>(
        &self,
        discussion_ids: &[&str],
        idempotency_key: Option<&str>,
        plan: impl Plan<T>,
    ) -> Result<T> {
        self.writing_session(|client| {
            let (mut tx, keeps_summaries) = Self::writing(client)?;
            let mut state = self.written_state(&mut tx)?;
            let records = records_of(&mut tx, discussion_ids, state.lines)?;
            let keyed = match idempotency_key {
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

    fn failed(&self, err: &std::io::Error) -> Fail {
        Fail::Discuss(Error::io(&self.location.shown, err))
    }

    /// Maps every discussion, one at a time, from one snapshot.
    pub(crate) fn map_discussions<T>(
        &self,
        mut map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Vec<T>> {
        self.reading(Vec::new, |tx| {
            let state = self.state(tx)?;
            let last = state.folded.last_at_ms;
            let mut mapped = Vec::new();
            each_discussion(tx, state.lines, |id, records| {
                mapped.extend(map(last, id, records));
            })?;
            Ok(mapped)
        })
    }

    /// As `map_discussions`, from `discuss_summaries` when it is complete:
    /// `from_row` gets the row of each discussion settled at the instant
    /// `now` gives, and the others are derived through `map`. Otherwise
    /// every discussion is derived, and the summaries are written for the
    /// next reader (when this role may write).
    pub(crate) fn map_summaries<T>(
        &self,
        now: impl Fn(Option<i64>) -> i64,
        mut from_row: impl FnMut(&str) -> std::result::Result<Option<T>, Untrusted>,
        mut map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Vec<T>> {
        let Some(summarize) = self.summarize else {
            return self.map_discussions(map);
        };
        let mut fresh: Vec<(String, Summary)> = Vec::new();
        let (mapped, lines) = self.reading(
            || (Vec::new(), None),
            |tx| {
                let state = self.state(tx)?;
                let last = state.folded.last_at_ms;
                let now_ms = now(last);
                if state.folded.summarized == state.lines && tables_exist(tx)?.read_summaries {
                    let mut mapped = Vec::new();
                    let mut unsettled: Vec<String> = Vec::new();
                    let mut rows = tx.query_typed_raw(
                        "SELECT discussion_id, settled_from_ms, row FROM discuss_summaries",
                        std::iter::empty::<(&(dyn ToSql + Sync), Type)>(),
                    )?;
                    let mut trusted = true;
                    while let Some(row) = rows.next()? {
                        let settled_from_ms: i64 = row.get(1);
                        if settled_from_ms > now_ms {
                            unsettled.push(row.get::<_, &str>(0).to_owned());
                        } else if let Ok(kept) = from_row(row.get(2)) {
                            mapped.extend(kept);
                        } else {
                            trusted = false;
                            break;
                        }
                    }
                    drop(rows);
                    if trusted {
                        let ids: Vec<&str> = unsettled.iter().map(String::as_str).collect();
                        each_of(tx, &ids, state.lines, |id, records| {
                            mapped.extend(map(last, id, records));
                        })?;
                        return Ok((mapped, None));
                    }
                }
                let mut mapped = Vec::new();
                each_discussion(tx, state.lines, |id, records| {
                    let summary = summarize(id, records);
                    // Settled, its row is its answer: one derivation.
                    match (summary.settled_from_ms <= now_ms)
                        .then(|| from_row(&summary.row))
                        .and_then(Result::ok)
                    {
                        Some(kept) => mapped.extend(kept),
                        None => mapped.extend(map(last, id, records)),
                    }
                    fresh.push((id.to_owned(), summary));
                })?;
                Ok((mapped, Some(state.lines)))
            },
        )?;
        if let Some(lines) = lines {
            // Speed for the next list only: a role that may only read, or a
            // writer in between, leaves them to another.
            let _ = self.write_summaries(lines, &fresh);
        }
        Ok(mapped)
    }

    /// Replaces `discuss_summaries` by `fresh`, the summaries of the first
    /// `lines` lines, if the ledger still has exactly those.
    fn write_summaries(&self, lines: u64, fresh: &[(String, Summary)]) -> Result<()> {
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

    /// As `map_discussions`, over the live set's candidates only; `None`
    /// when it cannot tell which.
    pub(crate) fn map_live<T>(
        &self,
        now: impl Fn(Option<i64>) -> i64,
        mut map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Option<Vec<T>>> {
        self.reading(
            || Some(Vec::new()),
            |tx| {
                let state = self.state(tx)?;
                let last = state.folded.last_at_ms;
                let Some(ids) = state.folded.live.candidates(now(last)) else {
                    return Ok(None);
                };
                let mut mapped = Vec::new();
                each_of(tx, &ids, state.lines, |id, records| {
                    mapped.extend(map(last, id, records));
                })?;
                Ok(Some(mapped))
            },
        )
    }

    /// Every discussion id, sorted.
    pub(crate) fn discussion_ids(&self) -> Result<Vec<String>> {
        self.reading(Vec::new, |tx| {
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
        self.reading(Vec::new, |tx| {
            let rows = tx.query_typed(
                "SELECT DISTINCT discussion_id FROM discuss_lines \
                 WHERE discussion_id >= $1 AND discussion_id < $2 ORDER BY 1",
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
        now_ms: i64,
        progress: impl FnMut(u64, u64),
    ) -> Result<LineCheck> {
        self.reading(LineCheck::default, |tx| {
            let state = self.state(tx)?;
            let mut failed = None;
            let check = check_lines(
                |line: &mut LineFeed<'_>| {
                    Ok(feed_rows(tx, 0, 0, line).unwrap_or_else(|err| {
                        failed = Some(err);
                        (0, 0)
                    }))
                },
                state.bytes,
                now_ms,
                progress,
            )
            .map_err(|e| Fail::Discuss(Error::new(ErrorCode::Internal, e.to_string())))?;
            if let Some(err) = failed {
                return Err(Fail::Db(err));
            }
            Ok(check)
        })
    }

    /// The records of whole operations after line `lines` (whose bytes end
    /// at `bytes`), in order, to `take`; where they end. Read in batches,
    /// each from its own snapshot, and handed on with the connection free:
    /// `take` may read the ledger itself (`events` does).
    pub(crate) fn stream_records(
        &self,
        (mut bytes, mut lines): (u64, u64),
        mut take: impl FnMut(Record) -> Result<()>,
    ) -> Result<(u64, u64)> {
        loop {
            let rows = self.reading(Vec::new, |tx| {
                let rows = tx.query_typed(
                    "SELECT line_no, line FROM discuss_lines WHERE line_no > $1 \
                     ORDER BY line_no LIMIT $2",
                    &[(&(lines as i64), Type::INT8), (&STREAM_BATCH, Type::INT8)],
                )?;
                Ok(rows
                    .iter()
                    .map(|row| (row.get::<_, i64>(0) as u64, row.get::<_, Vec<u8>>(1)))
                    .collect::<Vec<_>>())
            })?;
            let full = rows.len() as i64 == STREAM_BATCH;
            let mut records = Vec::new();
            let streamed = operations_of(
                |line: &mut LineFeed<'_>| {
                    let (mut at, mut count) = (bytes, lines);
                    for (line_no, text) in &rows {
                        count = *line_no;
                        line(at, count, text);
                        at += text.len() as u64 + 1;
                    }
                    Ok((at, count))
                },
                |_, line_no, line| record_and_mark(line_no, line),
                |record| records.extend(record),
            )
            .map_err(|e| Error::new(ErrorCode::Internal, e.to_string()))?;
            records.into_iter().try_for_each(&mut take)?;
            let moved = streamed.lines > lines;
            (bytes, lines) = (streamed.end, streamed.lines);
            if !full || !moved {
                return Ok((bytes, lines));
            }
        }
    }

    /// How many lines there are: it changes with every write.
    pub(crate) fn version(&self) -> Result<u64> {
        self.reading(
            || 0,
            |tx| {
                let row =
                    tx.query_typed_one("SELECT coalesce(max(line_no), 0) FROM discuss_lines", &[])?;
                Ok(row.get::<_, i64>(0) as u64)
            },
        )
    }

    /// Whether the first write has made the tables.
    pub(crate) fn exists(&self) -> Result<bool> {
        self.reading(|| false, |_| Ok(true))
    }

    /// How many lines (an unfinished last operation's too), and their
    /// bytes as a file would hold them.
    pub(crate) fn counts(&self) -> Result<(u64, u64)> {
        self.reading(
            || (0, 0),
            |tx| {
                let state = self.state(tx)?;
                Ok((state.lines + state.unfinished, state.bytes))
            },
        )
    }

    /// Writes every line, with its `\n`, in ledger order; how many.
    pub(crate) fn export(&self, out: &mut dyn Write) -> Result<u64> {
        self.reading(
            || 0,
            |tx| {
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

    /// Appends the lines `feed` gives (checked beforehand: complete lines,
    /// whole operations) in one transaction; how many.
    pub(crate) fn import(
        &self,
        source: &super::import::Source<'_>,
    ) -> Result<super::import::Imported> {
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
                super::lines::stream_lines(source.file, source.len, |offset, n, text| {
                    if !skip.contains(&offset) {
                        line(offset, n, text);
                    }
                })
            };
            let mut batch: Vec<(Vec<u8>, Option<Record>)> = Vec::with_capacity(IMPORT_BATCH);
            let mut failed: Option<Fail> = None;
            let mut imported = 0u64;
            let flush = |batch: &mut Vec<(Vec<u8>, Option<Record>)>,
                         tx: &mut Transaction<'_>,
                         state: &mut State|
             -> Step<()> {
                let items = batch
                    .iter()
                    .map(|(line, record)| (line.as_slice(), record.as_ref()));
                insert_lines(tx, state, items)?;
                batch.clear();
                Ok(())
            };
            feed(&mut |_, line_no, line| {
                if failed.is_some() {
                    return;
                }
                imported += 1;
                let record =
                    Record::parse(line, (state.lines + batch.len() as u64 + 1) as usize).ok();
                let _ = line_no;
                batch.push((line.to_vec(), record));
                if batch.len() >= IMPORT_BATCH
                    && let Err(err) = flush(&mut batch, &mut tx, &mut state)
                {
                    failed = Some(err);
                }
            })
            .map_err(|e| Fail::Discuss(Error::io("the import", &e)))?;
            if let Some(err) = failed {
                return Err(err);
            }
            flush(&mut batch, &mut tx, &mut state)?;
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
            Ok(super::import::Imported {
                imported,
                skipped: skip.len() as u64,
            })
        })
    }
}

/// Hands every discussion among the first `covered` lines to `each`, with
/// its records, streaming (one discussion in memory at a time).
fn each_discussion(
    tx: &mut Transaction<'_>,
    covered: u64,
    mut each: impl FnMut(&str, &[&Record]),
) -> Step<()> {
    let covered = covered as i64;
    let mut rows = tx.query_typed_raw(
        "SELECT discussion_id, line_no, line FROM discuss_lines \
         WHERE discussion_id IS NOT NULL AND line_no <= $1 \
         ORDER BY discussion_id, line_no",
        [(&covered as &(dyn ToSql + Sync), Type::INT8)],
    )?;
    let mut current: Option<String> = None;
    let mut records: Vec<Record> = Vec::new();
    let mut flush = |id: &str, records: &mut Vec<Record>| {
        if !records.is_empty() {
            let refs: Vec<&Record> = records.iter().collect();
            each(id, &refs);
        }
        records.clear();
    };
    while let Some(row) = rows.next()? {
        let id: &str = row.get(0);
        if current.as_deref() != Some(id) {
            if let Some(done) = current.take() {
                flush(&done, &mut records);
            }
            current = Some(id.to_owned());
        }
        let line_no: i64 = row.get(1);
        if let Ok(record) = Record::parse(row.get(2), line_no as usize) {
            records.push(record);
        }
    }
    if let Some(done) = current {
        flush(&done, &mut records);
    }
    Ok(())
}

/// Which tables are there, and what this role may do with the summaries'.
struct Tables {
    /// `discuss_lines`: a ledger (the lines are the truth; the rest is
    /// derived from them).
    ledger: bool,
    /// `discuss_state`: what is folded of the lines (made again when
    /// missing; readers then fold every line).
    state: bool,
    /// `discuss_summaries` (a database of an earlier version has none).
    summaries: bool,
    /// The summaries may be read (else lists derive every discussion).
    read_summaries: bool,
    /// The summaries may be written, or made (else writers leave them
    /// behind the ledger, and lists derive until a role that may writes
    /// them): a role granted only what earlier versions needed writes on.
    write_summaries: bool,
}

fn tables_exist(tx: &mut Transaction<'_>) -> Step<Tables> {
    let row = tx.query_typed_one(
        "SELECT to_regclass('discuss_lines') IS NOT NULL, \
         to_regclass('discuss_state') IS NOT NULL, \
         to_regclass('discuss_summaries') IS NOT NULL, \
         CASE WHEN to_regclass('discuss_summaries') IS NULL THEN false \
              ELSE has_table_privilege('discuss_summaries', 'SELECT') END, \
         CASE WHEN to_regclass('discuss_summaries') IS NULL \
              THEN has_schema_privilege(current_schema(), 'CREATE') \
              ELSE has_table_privilege('discuss_summaries', 'SELECT,INSERT,UPDATE,DELETE') END",
        &[],
    )?;
    Ok(Tables {
        ledger: row.get(0),
        state: row.get(1),
        summaries: row.get(2),
        read_summaries: row.get(3),
        write_summaries: row.get(4),
    })
}

/// Writes the summaries of `ids` (their records among the first `covered`
/// lines, this transaction's own included).
fn upsert_summaries(
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

/// Hands the rows after line `after` to `line`, with the byte offsets
/// they would have in a file whose first `bytes` bytes come before them.
fn feed_rows(
    tx: &mut Transaction<'_>,
    after: u64,
    bytes: u64,
    line: &mut LineFeed<'_>,
) -> std::result::Result<(u64, u64), postgres::Error> {
    let after = after as i64;
    let mut rows = tx.query_typed_raw(
        "SELECT line_no, line FROM discuss_lines WHERE line_no > $1 ORDER BY line_no",
        [(&after as &(dyn ToSql + Sync), Type::INT8)],
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
fn records_of(
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
        "SELECT line_no, line FROM discuss_lines \
         WHERE discussion_id = ANY($1) AND line_no <= $2 ORDER BY line_no",
        &[(&ids, Type::TEXT_ARRAY), (&(covered as i64), Type::INT8)],
    )?;
    Ok(rows
        .iter()
        .filter_map(|row| Record::parse(row.get(1), row.get::<_, i64>(0) as usize).ok())
        .filter(|record| record.discussion_id().is_some_and(|id| ids.contains(&id)))
        .collect())
}

/// The records of each of `ids` among the first `covered` lines, handed to
/// `each` a discussion at a time (one without records is left out).
fn each_of<'a>(
    tx: &mut Transaction<'_>,
    ids: &[&'a str],
    covered: u64,
    mut each: impl FnMut(&'a str, &[&Record]),
) -> Step<()> {
    let records = records_of(tx, ids, covered)?;
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

/// The first record that carries `key` and the records of its discussion.
fn keyed_of(tx: &mut Transaction<'_>, key: &str, covered: u64) -> Step<Option<Keyed>> {
    let rows = tx.query_typed(
        "SELECT line_no, line FROM discuss_lines \
         WHERE idempotency_key = $1 AND line_no <= $2 ORDER BY line_no",
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

/// Inserts lines after the state's last, numbering them on, and folds
/// them in; one statement for all of them.
fn insert_lines<'a>(
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
fn save_state(tx: &mut Transaction<'_>, state: &mut State) -> Step<()> {
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
