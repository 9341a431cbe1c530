//! The append-only JSON-lines ledger: format, file handling, snapshots, and
//! the cache (index and checkpoint) that spares commands a full replay.

pub(crate) mod cache;
mod check;
mod failpoint;
mod file;
mod filesystem;
pub mod hash;
pub mod lines;
mod postgres;
mod private_file;
mod snapshot;
mod storage;
mod view;

pub use crate::record::{Body, Idempotency, Record};
pub use cache::Cache;
pub use cache::summary::{Summarize, Summary, Untrusted};
pub use check::{LineCheck, LineFinding};
pub use failpoint::quiet_for;
pub use file::FileLedger;
pub use snapshot::{Snapshot, UnreadableLine};
pub use storage::{Info, Ledger};
pub use view::{Keyed, View};
