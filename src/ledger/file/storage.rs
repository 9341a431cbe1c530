//! What the file backend says of itself, and its one lock for every write:
//! the parts of the backend contract (`ledger::storage`) that are not a
//! read or a write of its own elsewhere.

use super::FileLedger;
use crate::error::Result;
use crate::ledger::excerpt::Plan;

impl FileLedger {
    pub(crate) fn kind(&self) -> &'static str {
        "file"
    }

    pub(crate) fn location(&self) -> String {
        self.path.display().to_string()
    }

    pub(crate) fn for_child(&self) -> std::io::Result<std::ffi::OsString> {
        Ok(std::path::absolute(&self.path)?.into_os_string())
    }

    pub(crate) fn exists(&self) -> Result<bool> {
        Ok(self.path.exists())
    }

    /// One lock for every write: the scope says only what to read.
    pub(crate) fn append<T>(
        &self,
        scope: crate::ledger::Scope<'_>,
        plan: impl Plan<T>,
    ) -> Result<T> {
        self.append_keyed(scope.discussions, scope.idempotency_key, plan)
    }
}
