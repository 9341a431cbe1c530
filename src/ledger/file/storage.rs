//! The file backend's side of the contract (`ledger::contract::Storage`):
//! each method hands on to `FileLedger`'s own.

use super::FileLedger;
use crate::error::Result;
use crate::ledger::excerpt::{Excerpt, Plan};
use crate::ledger::spent::Spent;
use crate::ledger::summary::Summarize;
use crate::record::Record;
use std::io::Write;
use std::time::Instant;

impl crate::ledger::contract::Storage for FileLedger {
    fn kind(&self) -> &'static str {
        "file"
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn for_child(&self) -> std::io::Result<std::ffi::OsString> {
        Ok(std::path::absolute(&self.path)?.into_os_string())
    }

    fn summarize_with(self, summarize: Summarize) -> Self {
        FileLedger::summarize_with(self, summarize)
    }

    fn view(&self, discussion_ids: &[&str]) -> Result<Excerpt> {
        FileLedger::view(self, discussion_ids)
    }

    fn view_within(&self, discussion_ids: &[&str], until: Instant) -> Result<Option<Excerpt>> {
        FileLedger::view_within(self, discussion_ids, until)
    }

    fn map_discussions<T>(
        &self,
        map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Vec<T>> {
        FileLedger::map_discussions(self, map)
    }

    fn map_summaries<T>(
        &self,
        now: impl Fn(Option<i64>) -> i64,
        from_row: impl FnMut(&str) -> std::result::Result<Option<T>, crate::ledger::Untrusted>,
        map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Vec<T>> {
        FileLedger::map_summaries(self, now, from_row, map)
    }

    fn map_live<T>(
        &self,
        now: impl Fn(Option<i64>) -> i64,
        map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Option<Vec<T>>> {
        FileLedger::map_live(self, now, map)
    }

    fn discussion_ids(&self) -> Result<Vec<String>> {
        FileLedger::discussion_ids(self)
    }

    fn check_lines(
        &self,
        checker: crate::ledger::check::LineChecker,
        progress: impl FnMut(u64, u64),
    ) -> Result<crate::ledger::LineCheck> {
        FileLedger::check_lines(self, checker, progress)
    }

    fn check_and_map<T>(
        &self,
        checker: crate::ledger::check::LineChecker,
        map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<(crate::ledger::LineCheck, Vec<T>)> {
        FileLedger::check_and_map(self, checker, map)
    }

    fn stream_records(
        &self,
        from: (u64, u64),
        take: impl FnMut(Record, &mut Spent) -> Result<()>,
    ) -> Result<(u64, u64)> {
        FileLedger::stream_records(self, from, take)
    }

    fn position_of_line(&self, after: u64) -> Result<(u64, u64)> {
        FileLedger::position_of_line(self, after)
    }

    fn version(&self) -> Option<u64> {
        FileLedger::version(self)
    }

    fn exists(&self) -> Result<bool> {
        Ok(self.path.exists())
    }

    /// One lock for every write: the scope says only what to read.
    fn append<T>(&self, scope: crate::ledger::Scope<'_>, plan: impl Plan<T>) -> Result<T> {
        FileLedger::append_keyed(self, scope.discussions, scope.idempotency_key, plan)
    }

    fn export(&self, out: &mut dyn Write) -> Result<u64> {
        FileLedger::export(self, out)
    }

    fn import(
        &self,
        source: &crate::ledger::import::Source<'_>,
    ) -> Result<crate::ledger::import::Imported> {
        FileLedger::import(self, source)
    }

    fn counts(&self) -> Result<(u64, u64)> {
        FileLedger::counts(self)
    }
}
