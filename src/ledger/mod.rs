//! The append-only JSON-lines ledger: format, file handling, snapshots, and
//! the cache (index and checkpoint) that spares commands a full replay.

pub(crate) mod cache;
mod check;
mod failpoint;
mod file;
mod filesystem;
pub(crate) mod hash;
pub(crate) mod import;
pub(crate) mod lines;
mod postgres;
mod private_file;
mod snapshot;
mod storage;
mod view;

pub(crate) use crate::record::{Body, Idempotency, Record};
pub(crate) use cache::summary::{Summarize, Summary, Untrusted};
pub(crate) use check::{LineCheck, LineFinding};
pub(crate) use failpoint::quiet_for;
pub(crate) use file::FileLedger;
pub(crate) use snapshot::{Snapshot, UnreadableLine};
pub(crate) use storage::{Info, Ledger};
pub(crate) use view::{Keyed, View};
