//! The append-only JSON-lines ledger: format, file handling, snapshots.

mod failpoint;
mod file;
mod filesystem;
pub mod record;
mod snapshot;

pub use file::Ledger;
pub use record::{Body, Record};
pub use snapshot::{Snapshot, UnreadableLine};
