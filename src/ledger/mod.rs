//! The append-only JSON-lines ledger, in rooms:
//!
//! - the contract: `storage` (`Ledger`, the handle the rest of the
//!   program uses, whose methods are what every backend has, dispatched
//!   in one place);
//! - the neutral parts both backends share: `excerpt` (what a read hands
//!   out), `lines` (reading and splitting v1 lines), `check` (`verify`'s
//!   line findings), `import` (a checked source), `live` (the
//!   discussions that may still be open), `mapping` (what a reader of
//!   many discussions derives and what it reads from the summaries, above
//!   both backends), `one_pass` (every discussion from one pass in line
//!   order) and `summary` (what lists read),
//!   `hash`, and the tests' fail points;
//! - `file/`: a file under a lock, with its cache (index, checkpoint,
//!   summary) inside it;
//! - `postgres/`: the same lines in a database, split by concern (schema,
//!   connection, reading, writing, the location URL).

pub(crate) mod check;
mod excerpt;
mod failpoint;
mod file;
pub(crate) mod fold;
pub(crate) mod gate;
pub(crate) mod hash;
pub(crate) mod import;
pub(crate) mod lines;
pub(crate) mod live;
mod mapping;
mod one_pass;
mod postgres;
pub(crate) mod spent;
mod storage;
pub(crate) mod summary;

pub(crate) use crate::record::{Body, Idempotency, Record};
pub(crate) use check::{ChainSummary, LineCheck, LineChecker, LineFinding, UnreadableLine};
pub(crate) use excerpt::{Excerpt, Keyed, Scope};
pub(crate) use failpoint::{hit as failpoint, quiet_for};
pub(crate) use file::FileLedger;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use file::cache::peek_as_serde;
pub(crate) use postgres::LOOKUPS as POSTGRES_LOOKUPS;
pub(crate) use postgres::{PgLedger, SearchDoc};
pub(crate) use storage::{Info, Ledger};
pub(crate) use summary::{Summarize, Summary, Untrusted};
