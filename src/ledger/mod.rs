//! The append-only JSON-lines ledger: format, file handling, snapshots, and
//! the cache (index and checkpoint) that spares commands a full replay.

pub(crate) mod cache;
mod failpoint;
mod file;
mod filesystem;
pub mod hash;
pub mod lines;
mod private_file;
pub mod record;
mod snapshot;
mod view;

pub use cache::Cache;
pub use failpoint::quiet_for;
pub use file::{Ledger, LineCheck};
pub use record::{Body, Idempotency, Record};
pub use snapshot::{Snapshot, UnreadableLine};
pub use view::{Keyed, View};
