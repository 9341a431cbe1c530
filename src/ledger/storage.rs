//! Where the ledger lives: `Ledger`, the one handle the engine and the
//! commands use, and the backend contract: each method of `Ledger` below
//! is one a backend has, called through `on_backend!` (the one dispatch).
//! Two backends meet it — a file under a lock on one host (`file/`), or a
//! PostgreSQL database for a fleet across hosts (`postgres/`). Both store
//! the very same v1 lines in one order and hand out the same `Excerpt`, so
//! the derivation never knows which it reads. A third backend is a room
//! of its own with the same methods, one variant of `Ledger` and its arm
//! in `Ledger::at`; nothing above the ledger changes.

use super::check::{LineCheck, LineChecker};
use super::excerpt::{Excerpt, Plan, Scope};
use super::file::FileLedger;
use super::mapping;
use super::postgres::{Location, PgLedger, is_postgres_url};
use super::spent::Spent;
use super::summary::{Summarize, Untrusted};
use crate::error::{Error, ErrorCode, Result};
use crate::record::Record;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// The scheme of a location written `SCHEME:/…` (RFC 3986's scheme
/// characters), which a file path never needs to look like.
fn url_scheme(location: &str) -> Option<&str> {
    let (scheme, rest) = location.split_once(':')?;
    let mut chars = scheme.chars();
    let starts_with_letter = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let scheme_chars = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (starts_with_letter && scheme_chars && rest.starts_with('/')).then_some(scheme)
}

/// `host=db dbname=fleet …`: libpq's other way of naming a database.
fn looks_like_key_value(location: &str) -> bool {
    const KEYWORDS: [&str; 10] = [
        "host", "hostaddr", "port", "dbname", "user", "password", "service", "sslmode", "passfile",
        "options",
    ];
    location
        .trim_start()
        .split_once('=')
        .is_some_and(|(key, _)| KEYWORDS.contains(&key.trim_end()))
}

/// Rows a stream of `serve` reads at a time from PostgreSQL: 256 streams
/// hold a few tens of MiB at most, whatever the ledger's size.
const SMALL_STREAM_BATCH: i64 = 256;

#[derive(Debug, Clone)]
pub(crate) enum Ledger {
    File(FileLedger),
    Postgres(Box<PgLedger>),
}

/// Runs `$call` on whichever backend `$ledger` is: the one place that
/// knows there are two.
macro_rules! on_backend {
    ($ledger:expr, $backend:ident => $call:expr) => {
        match $ledger {
            Ledger::File($backend) => $call,
            Ledger::Postgres($backend) => {
                let $backend: &PgLedger = $backend;
                $call
            }
        }
    };
}

/// What `ledger info` tells.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Info {
    pub kind: &'static str,
    pub location: String,
    pub lines: u64,
    pub bytes: u64,
}

impl Ledger {
    /// The ledger `--ledger` / `DISCUSS_LEDGER` names: a `postgres://` or
    /// `postgresql://` URL, else a file path.
    /// A location that looks like a URL of another scheme (`postgresq://`,
    /// `postgresql:/`, `http://`) or like a libpq key/value string is
    /// refused: it must never become a file ledger in the current folder.
    pub(crate) fn at(location: PathBuf, allow_network_fs: bool) -> Result<Ledger> {
        let text = location.to_string_lossy();
        if is_postgres_url(&text) {
            return Ok(Ledger::Postgres(Box::new(PgLedger::new(Location::parse(
                &text,
            )?))));
        }
        if let Some(scheme) = url_scheme(&text) {
            // Only the scheme is shown: the rest may hold a password.
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "the ledger location starts like a URL ({scheme}:/…) but only postgres:// and postgresql:// URLs are ledgers"
                ),
            )
            .detail("scheme", scheme)
            .hint("a PostgreSQL ledger: postgresql://user@host:port/dbname")
            .hint("a file ledger: a path such as ./ledger.jsonl"));
        }
        if looks_like_key_value(&text) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the ledger location looks like a libpq key/value connection string (not shown: it may hold a password); a PostgreSQL ledger is given as a URL",
            )
            .hint("postgresql://user@host:port/dbname?sslmode=require"));
        }
        Ok(Ledger::File(
            FileLedger::new(location).allow_network_fs(allow_network_fs),
        ))
    }

    /// Keeps a summary of every discussion, made by `summarize`, for
    /// `map_summaries` (a file's cache keeps it beside the index).
    pub(crate) fn summarize_with(self, summarize: Summarize) -> Ledger {
        match self {
            Ledger::File(file) => Ledger::File(file.summarize_with(summarize)),
            Ledger::Postgres(pg) => Ledger::Postgres(Box::new(pg.summarize_with(summarize))),
        }
    }

    /// Streams read a few hundred lines at a time (PostgreSQL's batches;
    /// a file's reads are small already): a server holds many streams.
    pub(crate) fn streaming_in_small_batches(self) -> Ledger {
        match self {
            Ledger::File(file) => Ledger::File(file),
            Ledger::Postgres(pg) => Ledger::Postgres(Box::new(pg.stream_batch(SMALL_STREAM_BATCH))),
        }
    }

    /// `file`, `postgres`: what `ledger info` and notes call it.
    pub(crate) fn kind(&self) -> &'static str {
        on_backend!(self, backend => backend.kind())
    }

    /// Where it is, for people: the path, or the URL without its password.
    pub(crate) fn location(&self) -> String {
        on_backend!(self, backend => backend.location())
    }

    /// The database ledger, for what only a database has (its own
    /// full-text search).
    pub(crate) fn as_postgres(&self) -> Option<&PgLedger> {
        match self {
            Ledger::File(_) => None,
            Ledger::Postgres(pg) => Some(pg),
        }
    }

    /// The file ledger, for what only a file has (its torn tails).
    pub(crate) fn as_file(&self) -> Option<&FileLedger> {
        match self {
            Ledger::File(file) => Some(file),
            Ledger::Postgres(_) => None,
        }
    }

    /// What a supervised child gets as `DISCUSS_LEDGER`: the same ledger,
    /// from any working directory.
    pub(crate) fn for_child(&self) -> std::io::Result<OsString> {
        on_backend!(self, backend => backend.for_child())
    }

    pub(crate) fn network_fs_allowed(&self) -> bool {
        matches!(self, Ledger::File(file) if file.network_fs_allowed())
    }

    /// The global state, the newest time and the records of
    /// `discussion_ids`, read consistently; an empty view before the first
    /// write.
    pub(crate) fn view(&self, discussion_ids: &[&str]) -> Result<Excerpt> {
        let excerpt = on_backend!(self, backend => backend.view(discussion_ids))?;
        super::gate::check(&excerpt)?;
        Ok(excerpt)
    }

    /// As `view`, but `None` when a writer still holds the ledger at
    /// `until` (a backend whose readers never wait answers at once).
    pub(crate) fn view_within(
        &self,
        discussion_ids: &[&str],
        until: Instant,
    ) -> Result<Option<Excerpt>> {
        let excerpt = match self {
            Ledger::File(file) => file.view_within(discussion_ids, until)?,
            // Readers of a database never wait for writers.
            Ledger::Postgres(pg) => Some(pg.view(discussion_ids)?),
        };
        if let Some(excerpt) = &excerpt {
            super::gate::check(excerpt)?;
        }
        Ok(excerpt)
    }

    /// Maps every discussion, one at a time, in the order of their ids:
    /// `map` gets the newest `at_ms`, the id and the records.
    pub(crate) fn map_discussions<T>(
        &self,
        mut map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Vec<T>> {
        on_backend!(self, backend => backend.discussions(Vec::new, |discussions| {
            Ok(mapping::all(discussions, None, &mut map)?.1)
        }))
    }

    /// As `map_discussions`, unordered, from the kept summaries where they
    /// can be trusted (`mapping::summaries`): `from_row` gets the kept row
    /// of each settled discussion that no line touched since, `map` derives
    /// the others (`Err(Untrusted)` from `from_row`: a row it cannot read,
    /// and the summary is not used).
    pub(crate) fn map_summaries<T>(
        &self,
        now: impl Fn(Option<i64>) -> i64,
        mut from_row: impl FnMut(&str) -> std::result::Result<Option<T>, Untrusted>,
        mut map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Vec<T>> {
        on_backend!(self, backend => backend.discussions(Vec::new, |discussions| {
            mapping::summaries(discussions, &now, &mut from_row, &mut map)
        }))
    }

    /// As `map_discussions`, unordered, over the discussions that may still
    /// be open or active only; `None` when that cannot be told.
    pub(crate) fn map_live<T>(
        &self,
        now: impl Fn(Option<i64>) -> i64,
        mut map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Option<Vec<T>>> {
        on_backend!(self, backend => backend.discussions(|| Some(Vec::new()), |discussions| {
            mapping::live(discussions, &now, &mut map)
        }))
    }

    /// Every discussion id, sorted.
    pub(crate) fn discussion_ids(&self) -> Result<Vec<String>> {
        on_backend!(self, backend => backend.discussion_ids())
    }

    /// The discussion ids that start with `prefix`, sorted.
    pub(crate) fn discussion_ids_starting(&self, prefix: &str) -> Result<Vec<String>> {
        match self {
            Ledger::File(file) => {
                let mut ids = file.discussion_ids()?;
                ids.retain(|id| id.starts_with(prefix));
                Ok(ids)
            }
            Ledger::Postgres(pg) => pg.discussion_ids_starting(prefix),
        }
    }

    /// Every line checked, as `verify` reports.
    pub(crate) fn check_lines(
        &self,
        checker: LineChecker,
        progress: impl FnMut(u64, u64),
    ) -> Result<LineCheck> {
        on_backend!(self, backend => backend.check_lines(checker, progress))
    }

    /// `check_lines` and `map_discussions` together (`verify`), from one
    /// read of the lines in order: each parsed once, checked, and handed
    /// to its discussion.
    pub(crate) fn check_and_map<T>(
        &self,
        checker: LineChecker,
        mut map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<(LineCheck, Vec<T>)> {
        on_backend!(self, backend => backend.discussions(Default::default, |discussions| {
            let (check, mapped) = mapping::all(discussions, Some(checker.clone()), &mut map)?;
            Ok((check.unwrap_or_default(), mapped))
        }))
    }

    /// The records of whole operations after position `from` (bytes, lines)
    /// to `take`, in order; the position after them. `take` gives the
    /// records it is done with to the `Spent` it is handed (they are
    /// dropped on the thread that parsed them).
    pub(crate) fn stream_records(
        &self,
        from: (u64, u64),
        take: impl FnMut(Record, &mut Spent) -> Result<()>,
    ) -> Result<(u64, u64)> {
        on_backend!(self, backend => backend.stream_records(from, take))
    }

    /// The position to pass `stream_records` for the records after line
    /// `after`: at or before the start of the operation that holds it,
    /// found without reading the lines before it where the backend can.
    pub(crate) fn position_of_line(&self, after: u64) -> Result<(u64, u64)> {
        on_backend!(self, backend => backend.position_of_line(after))
    }

    /// A number that changes whenever the ledger does: pollers read again
    /// only then. `None` when it cannot be told now.
    pub(crate) fn version(&self) -> Option<u64> {
        match self {
            Ledger::File(file) => file.version(),
            Ledger::Postgres(pg) => pg.version().ok(),
        }
    }

    /// Whether anything was ever written.
    pub(crate) fn exists(&self) -> Result<bool> {
        on_backend!(self, backend => backend.exists())
    }

    /// `ledger_unreadable`, naming the location, when nothing was ever
    /// written there: for the readers a wrong path must not pass
    /// (`verify`, a CI job's audit).
    pub(crate) fn require_existing(&self) -> Result<()> {
        if self.exists()? {
            return Ok(());
        }
        let location = self.location();
        Err(Error::new(
            ErrorCode::LedgerUnreadable,
            format!("there is no ledger at {location}"),
        )
        .detail("ledger", location)
        .hint("point --ledger / DISCUSS_LEDGER at the ledger (a file, or a postgresql:// URL)"))
    }

    /// One read-validate-append step on `discussion_ids`: `plan` sees the
    /// excerpt and returns the records to append and a result, returned
    /// once they are durable.
    pub(crate) fn append<T>(&self, discussion_ids: &[&str], plan: impl Plan<T>) -> Result<T> {
        self.append_scoped(
            Scope {
                discussions: discussion_ids,
                ..Scope::default()
            },
            plan,
        )
    }

    /// `append` of what every write reads: fleets, quotas, the kill-switch.
    pub(crate) fn append_global<T>(&self, plan: impl Plan<T>) -> Result<T> {
        self.append_scoped(
            Scope {
                global: true,
                ..Scope::default()
            },
            plan,
        )
    }

    /// `append` within `scope`.
    pub(crate) fn append_scoped<T>(&self, scope: Scope<'_>, plan: impl Plan<T>) -> Result<T> {
        // A plan that writes beyond its scope would escape the locks that
        // keep its rules: refused, whichever backend would have let it.
        let within = |excerpt: &Excerpt| {
            super::gate::check(excerpt)?;
            let (records, answer) = plan(excerpt)?;
            if !scope.holds(&records) {
                return Err(Error::new(
                    ErrorCode::Internal,
                    "a write planned records beyond what it said it touches; nothing was written",
                ));
            }
            Ok((records, answer))
        };
        on_backend!(self, backend => backend.append(scope, within))
    }

    /// Writes every complete line in ledger order, byte for byte; how many.
    pub(crate) fn export(&self, out: &mut dyn Write) -> Result<u64> {
        on_backend!(self, backend => backend.export(out))
    }

    /// Appends the lines of `source` verbatim, all or nothing, refusing
    /// (or with `skip_existing` leaving out) records whose ids the ledger
    /// holds already.
    pub(crate) fn import(
        &self,
        source: &super::import::Source<'_>,
    ) -> Result<super::import::Imported> {
        on_backend!(self, backend => backend.import(source))
    }

    pub(crate) fn info(&self) -> Result<Info> {
        let (lines, bytes) = on_backend!(self, backend => backend.counts())?;
        Ok(Info {
            kind: self.kind(),
            location: self.location(),
            lines,
            bytes,
        })
    }
}
