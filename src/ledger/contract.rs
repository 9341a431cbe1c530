//! `Storage`: the contract every backend meets (a file, `file/`; a
//! PostgreSQL database, `postgres/`). A leaf of the ledger's rooms: the
//! backends implement it, and `storage.rs`'s `Ledger` dispatches to them,
//! so neither backend depends on the handle over both.

use super::check::{LineCheck, LineChecker};
use super::excerpt::{Excerpt, Plan, Scope};
use super::spent::Spent;
use super::summary::{Summarize, Untrusted};
use crate::error::Result;
use crate::record::Record;
use std::ffi::OsString;
use std::io::Write;
use std::time::Instant;

/// What a backend does. Generic over the callers' closures (not `dyn`):
/// a whole-ledger read calls them once a discussion, and each call stays
/// a direct one.
pub(crate) trait Storage {
    /// `file`, `postgres`: what `ledger info` and notes call it.
    fn kind(&self) -> &'static str;
    /// Where it is, for people: the path, or the URL without its password.
    fn location(&self) -> String;
    /// What a supervised child gets as `DISCUSS_LEDGER`: the same ledger,
    /// from any working directory.
    fn for_child(&self) -> std::io::Result<OsString>;
    /// Keeps a summary of every discussion, made by `summarize`, for
    /// `map_summaries`.
    fn summarize_with(self, summarize: Summarize) -> Self
    where
        Self: Sized;
    /// The global state, the newest time and the records of
    /// `discussion_ids`, read consistently; an empty view before the first
    /// write.
    fn view(&self, discussion_ids: &[&str]) -> Result<Excerpt>;
    /// As `view`, but `None` when a writer still holds the ledger at
    /// `until` (a backend whose readers never wait answers at once).
    fn view_within(&self, discussion_ids: &[&str], until: Instant) -> Result<Option<Excerpt>>;
    /// Maps every discussion, one at a time: `map` gets the newest `at_ms`,
    /// the id and the records.
    fn map_discussions<T>(
        &self,
        map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Vec<T>>;
    /// As `map_discussions`, from the summary where it can be trusted:
    /// `from_row` gets the kept row of each settled discussion that no line
    /// touched since, `map` derives the others (`Err(Untrusted)` from
    /// `from_row`: a row it cannot read, and the summary is not used).
    fn map_summaries<T>(
        &self,
        now: impl Fn(Option<i64>) -> i64,
        from_row: impl FnMut(&str) -> std::result::Result<Option<T>, Untrusted>,
        map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Vec<T>>;
    /// As `map_discussions`, over the discussions that may still be open or
    /// active only; `None` when that cannot be told.
    fn map_live<T>(
        &self,
        now: impl Fn(Option<i64>) -> i64,
        map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Option<Vec<T>>>;
    /// Every discussion id, sorted.
    fn discussion_ids(&self) -> Result<Vec<String>>;
    /// The discussion ids that start with `prefix`, sorted.
    fn discussion_ids_starting(&self, prefix: &str) -> Result<Vec<String>> {
        let mut ids = self.discussion_ids()?;
        ids.retain(|id| id.starts_with(prefix));
        Ok(ids)
    }
    /// Every line checked, as `verify` reports.
    fn check_lines(
        &self,
        checker: LineChecker,
        progress: impl FnMut(u64, u64),
    ) -> Result<LineCheck>;
    /// `check_lines` and `map_discussions` together (`verify`), from one
    /// read of the lines in order: each parsed once, checked, and handed
    /// to its discussion.
    fn check_and_map<T>(
        &self,
        checker: LineChecker,
        map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<(LineCheck, Vec<T>)>;
    /// The records of whole operations after position `from` (bytes, lines)
    /// to `take`, in order; the position after them. `take` gives the
    /// records it is done with to the `Spent` it is handed (they are
    /// dropped on the thread that parsed them).
    fn stream_records(
        &self,
        from: (u64, u64),
        take: impl FnMut(Record, &mut Spent) -> Result<()>,
    ) -> Result<(u64, u64)>;
    /// The position to pass `stream_records` for the records after line
    /// `after`: at or before the start of the operation that holds it,
    /// found without reading the lines before it where the backend can.
    fn position_of_line(&self, after: u64) -> Result<(u64, u64)>;
    /// A number that changes whenever the ledger does: pollers read again
    /// only then. `None` when it cannot be told now.
    fn version(&self) -> Option<u64>;
    /// Whether anything was ever written.
    fn exists(&self) -> Result<bool>;
    /// One read-validate-append step, exclusive among the writes whose
    /// scopes meet: `plan` sees the excerpt of `scope` (with what the
    /// ledger has under its idempotency key) and returns the records to
    /// append, all within the scope, and a result, returned once they are
    /// durable.
    fn append<T>(&self, scope: Scope<'_>, plan: impl Plan<T>) -> Result<T>;
    /// Writes every complete line in ledger order, byte for byte; how many.
    fn export(&self, out: &mut dyn Write) -> Result<u64>;
    /// Appends the lines of `source` verbatim, all or nothing, refusing
    /// (or with `skip_existing` leaving out) records whose ids the ledger
    /// holds already.
    fn import(&self, source: &super::import::Source<'_>) -> Result<super::import::Imported>;
    /// How many complete lines, and how many bytes they take.
    fn counts(&self) -> Result<(u64, u64)>;
}
