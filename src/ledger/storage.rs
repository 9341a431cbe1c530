//! Where the ledger lives: the one interface the engine and the commands
//! use, with two implementations — a file under a lock on one host
//! (`file.rs`), or a PostgreSQL database for a fleet across hosts
//! (`postgres/`). Both store the very same v1 lines in one order and hand
//! out the same `View`, so the derivation never knows which it reads.

use super::check::LineCheck;
use super::file::FileLedger;
use super::postgres::{Location, PgLedger, is_postgres_url};
use super::summary::{Summarize, Untrusted};
use super::view::{Plan, View};
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

#[derive(Debug, Clone)]
pub(crate) enum Ledger {
    File(FileLedger),
    Postgres(Box<PgLedger>),
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

    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Ledger::File(_) => "file",
            Ledger::Postgres(_) => "postgres",
        }
    }

    /// Where it is, for people: the path, or the URL without its password.
    pub(crate) fn location(&self) -> String {
        match self {
            Ledger::File(file) => file.path().display().to_string(),
            Ledger::Postgres(pg) => pg.shown().to_owned(),
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
        match self {
            Ledger::File(file) => Ok(std::path::absolute(file.path())?.into_os_string()),
            Ledger::Postgres(pg) => Ok(pg.url().into()),
        }
    }

    pub(crate) fn network_fs_allowed(&self) -> bool {
        matches!(self, Ledger::File(file) if file.network_fs_allowed())
    }

    /// The global state, the newest time and the records of
    /// `discussion_ids`, read consistently; an empty view before the first
    /// write.
    pub(crate) fn view(&self, discussion_ids: &[&str]) -> Result<View> {
        match self {
            Ledger::File(file) => file.view(discussion_ids),
            Ledger::Postgres(pg) => pg.view(discussion_ids),
        }
    }

    /// As `view`, but `None` when a file's writer still holds its lock at
    /// `until` (a database's readers never wait for writers).
    pub(crate) fn view_within(
        &self,
        discussion_ids: &[&str],
        until: Instant,
    ) -> Result<Option<View>> {
        match self {
            Ledger::File(file) => file.view_within(discussion_ids, until),
            Ledger::Postgres(pg) => pg.view(discussion_ids).map(Some),
        }
    }

    /// Maps every discussion, one at a time: `map` gets the newest `at_ms`,
    /// the id and the records.
    pub(crate) fn map_discussions<T>(
        &self,
        map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Vec<T>> {
        match self {
            Ledger::File(file) => file.map_discussions(map),
            Ledger::Postgres(pg) => pg.map_discussions(map),
        }
    }

    /// As `map_discussions`, from the summary where it can be trusted:
    /// `from_row` gets the kept row of each settled discussion that no line
    /// touched since, `map` derives the others (`Err(Untrusted)` from
    /// `from_row`: a row it cannot read, and the summary is not used).
    pub(crate) fn map_summaries<T>(
        &self,
        now: impl Fn(Option<i64>) -> i64,
        from_row: impl FnMut(&str) -> std::result::Result<Option<T>, Untrusted>,
        map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Vec<T>> {
        match self {
            Ledger::File(file) => file.map_summaries(now, from_row, map),
            Ledger::Postgres(pg) => pg.map_summaries(now, from_row, map),
        }
    }

    /// As `map_discussions`, over the discussions that may still be open or
    /// active only; `None` when that cannot be told.
    pub(crate) fn map_live<T>(
        &self,
        now: impl Fn(Option<i64>) -> i64,
        map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Option<Vec<T>>> {
        match self {
            Ledger::File(file) => file.map_live(now, map),
            Ledger::Postgres(pg) => pg.map_live(now, map),
        }
    }

    /// Every discussion id, sorted.
    pub(crate) fn discussion_ids(&self) -> Result<Vec<String>> {
        match self {
            Ledger::File(file) => file.discussion_ids(),
            Ledger::Postgres(pg) => pg.discussion_ids(),
        }
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
        now_ms: i64,
        progress: impl FnMut(u64, u64),
    ) -> Result<LineCheck> {
        match self {
            Ledger::File(file) => file.check_lines(now_ms, progress),
            Ledger::Postgres(pg) => pg.check_lines(now_ms, progress),
        }
    }

    /// The records of whole operations after position `from` (bytes, lines)
    /// to `take`, in order; the position after them.
    pub(crate) fn stream_records(
        &self,
        from: (u64, u64),
        take: impl FnMut(Record) -> Result<()>,
    ) -> Result<(u64, u64)> {
        match self {
            Ledger::File(file) => file.stream_records(from, take),
            Ledger::Postgres(pg) => pg.stream_records(from, take),
        }
    }

    /// A number that changes whenever the ledger does (its size, its line
    /// count): pollers read again only then.
    pub(crate) fn version(&self) -> Option<u64> {
        match self {
            Ledger::File(file) => file.version(),
            Ledger::Postgres(pg) => pg.version().ok(),
        }
    }

    /// Whether anything was ever written (a file that is there, a
    /// database with the tables).
    pub(crate) fn exists(&self) -> Result<bool> {
        match self {
            Ledger::File(file) => Ok(file.path().exists()),
            Ledger::Postgres(pg) => pg.exists(),
        }
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

    /// One read-validate-append step: `plan` sees the view and returns the
    /// records to append and a result, returned once they are durable.
    pub(crate) fn append<T>(&self, discussion_ids: &[&str], plan: impl Plan<T>) -> Result<T> {
        self.append_keyed(discussion_ids, None, plan)
    }

    /// `append` for a retry-safe operation: the view also holds what the
    /// ledger has under `idempotency_key`.
    pub(crate) fn append_keyed<T>(
        &self,
        discussion_ids: &[&str],
        idempotency_key: Option<&str>,
        plan: impl Plan<T>,
    ) -> Result<T> {
        match self {
            Ledger::File(file) => file.append_keyed(discussion_ids, idempotency_key, plan),
            Ledger::Postgres(pg) => pg.append_keyed(discussion_ids, idempotency_key, plan),
        }
    }

    /// Writes every complete line in ledger order, byte for byte; how many.
    pub(crate) fn export(&self, out: &mut dyn Write) -> Result<u64> {
        match self {
            Ledger::File(file) => file.export(out),
            Ledger::Postgres(pg) => pg.export(out),
        }
    }

    /// Appends the lines of `source` (a file of `len` bytes: complete lines
    /// in whole operations, checked by the caller) verbatim, all or
    /// nothing; how many.
    /// Appends the lines of `source` verbatim, all or nothing, refusing
    /// (or with `skip_existing` leaving out) records whose ids the ledger
    /// holds already.
    pub(crate) fn import(
        &self,
        source: &super::import::Source<'_>,
    ) -> Result<super::import::Imported> {
        match self {
            Ledger::File(file) => file.import(source),
            Ledger::Postgres(pg) => pg.import(source),
        }
    }

    pub(crate) fn info(&self) -> Result<Info> {
        let (lines, bytes) = match self {
            Ledger::File(file) => file.counts()?,
            Ledger::Postgres(pg) => pg.counts()?,
        };
        Ok(Info {
            kind: self.kind(),
            location: self.location(),
            lines,
            bytes,
        })
    }
}
