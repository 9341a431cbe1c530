//! The append-only JSON-lines ledger: format, file handling, snapshots, and
//! the cache (index and checkpoint) that spares commands a full replay.

mod check;
mod failpoint;
mod file;
pub(crate) mod hash;
pub(crate) mod import;
pub(crate) mod lines;
pub(crate) mod live;
mod postgres;
mod snapshot;
mod storage;
pub(crate) mod summary;
mod view;

pub(crate) use crate::record::{Body, Idempotency, Record};
pub(crate) use check::{LineCheck, LineFinding};
pub(crate) use failpoint::quiet_for;
pub(crate) use file::FileLedger;
pub(crate) use snapshot::{Snapshot, UnreadableLine};
pub(crate) use storage::{Info, Ledger};
pub(crate) use summary::{Summarize, Summary, Untrusted};
pub(crate) use view::{Keyed, View};
