//! The ledger in PostgreSQL, for fleets that span hosts: the very same v1
//! lines, one row a line, numbered in one total order.
//!
//! Three tables, made by the first write to an empty database:
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
//!   reading, as a file's cache catches up. It also keeps the last line's
//!   digest, which the next line's `prev` names (`record::chain`).
//! - `discuss_summaries`: a list row for every discussion, as a file's
//!   `<ledger>.summary` (made on a database of an earlier version by its
//!   next write).
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

mod connection;
mod location;
mod read;
mod schema;
mod search;
mod write;

pub(super) use location::{Location, is_postgres_url};
pub(crate) use schema::LOOKUPS;
pub(crate) use search::SearchDoc;
// What the rooms of this backend share.
use read::{keyed_of, records_of};
use schema::{
    CATCH_UP, COPY_LINES, IDS_BETWEEN, INSERT_LINES, KEYED, LAST_LINE_OF_EACH, RECORDS_OF, SCHEMA,
    STREAM, SUMMARIES, Tables, UPSERT_SUMMARIES, WRITE_OPERATION, WRITE_OPERATION_WITH_SUMMARIES,
    shared_lock_and_tables, tables_exist,
};

use super::check::{LineCheck, LineChecker, LineFinding, check_lines};
use super::excerpt::{Excerpt, Keyed, Plan, Scope};
use super::failpoint;
use super::lines::{LineFeed, operations_of, record_and_mark};
use super::mapping::Discussions;
use super::one_pass::{OnePass, PassFailed, in_line_order};
use super::spent::Spent;
use super::summary::{Summarize, SummaryLine, Untrusted};
use crate::error::{Error, ErrorCode, Result};
use crate::global::Global;
use crate::ledger::live::LiveSet;
use crate::record::{Record, chain};
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::error::SqlState;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{ToSql, Type};
use postgres::{Client, IsolationLevel, Transaction};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

/// The advisory lock every writer of a database takes: "discuss1".
const LOCK_KEY: i64 = 0x6469_7363_7573_7331;

/// The lock a scoped write takes to number its lines, held from just
/// before its insert to its commit: "discuss2".
const NUMBER_KEY: i64 = 0x6469_7363_7573_7332;

/// The format the tables hold; a database of another is refused.
const FORMAT: i32 = 1;

/// Rows read at a time by `stream_records` (a command's default).
const STREAM_BATCH: i64 = 10_000;

/// Rows inserted by one statement during an import.
const IMPORT_BATCH: usize = 5_000;

/// A ledger in a PostgreSQL database, reached through one connection
/// opened on first use and kept for the process.
pub(crate) struct PgLedger {
    location: Location,
    /// Connections open and not in use: one for a command; for `serve`,
    /// a small pool that requests on several threads take from, bounded
    /// (`connection.rs`); `freed` wakes a call that waits for one.
    pool: Mutex<connection::Pool>,
    freed: std::sync::Condvar,
    /// With it, writers keep `discuss_summaries` and lists read it.
    summarize: Option<Summarize>,
    /// Rows `stream_records` reads at a time.
    stream_batch: i64,
    /// Whether `stream_records` reads the next batch while the last one is
    /// handed on (a command's streams; not a server's, each of which would
    /// hold a second connection).
    read_ahead: bool,
}

impl Clone for PgLedger {
    fn clone(&self) -> Self {
        PgLedger {
            summarize: self.summarize,
            stream_batch: self.stream_batch,
            read_ahead: self.read_ahead,
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
    /// The digest of the last line (hex), which the next line's `prev`
    /// names; `None` in a row an earlier version wrote (then the line is
    /// read).
    last_line_sha256: Option<String>,
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
    /// The digest of the last line folded in by this transaction (written
    /// to the row's `last_line_sha256` when it is saved).
    last_digest: Option<chain::Digest>,
}

impl State {
    /// Folds in line `line_no`, of `len` bytes and digest `digest`.
    fn fold(&mut self, line_no: u64, len: usize, digest: chain::Digest, record: Option<&Record>) {
        self.dirty = true;
        self.lines = line_no;
        self.bytes += len as u64 + 1;
        self.last_digest = Some(digest);
        let Some(record) = record else { return };
        crate::ledger::fold::Fold {
            global: &mut self.folded.global,
            live: &mut self.folded.live,
            last_at_ms: &mut self.folded.last_at_ms,
        }
        .record(record);
    }

    fn view(&mut self, records: Vec<Record>, keyed: Option<Keyed>) -> Excerpt {
        Excerpt {
            global: std::mem::take(&mut self.folded.global),
            last_at_ms: self.folded.last_at_ms,
            records,
            keyed,
        }
    }
}

/// A failure inside a session: the database's, or the command's own.
pub(crate) enum Fail {
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

pub(crate) type Step<T> = std::result::Result<T, Fail>;
impl PgLedger {
    pub(crate) fn new(location: Location) -> PgLedger {
        PgLedger {
            location,
            pool: Mutex::default(),
            freed: std::sync::Condvar::new(),
            summarize: None,
            stream_batch: crate::ledger::failpoint::stream_batch(STREAM_BATCH),
            read_ahead: true,
        }
    }

    /// `stream_records` reads `rows` at a time, a batch after another
    /// (a server's streams).
    pub(crate) fn stream_batch(mut self, rows: i64) -> Self {
        self.stream_batch = rows.max(1);
        self.read_ahead = false;
        self
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
}

/// The PostgreSQL backend's side of the contract (`ledger::storage`).
impl PgLedger {
    pub(crate) fn kind(&self) -> &'static str {
        "postgres"
    }

    pub(crate) fn location(&self) -> String {
        self.shown().to_owned()
    }

    pub(crate) fn for_child(&self) -> std::io::Result<std::ffi::OsString> {
        Ok(self.url().into())
    }
}
