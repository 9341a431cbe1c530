//! The pure derivation of discussions from ledger records (records + now
//! → state), a discussion's list row, and the envelope and policy rules.
//! No I/O; the engine's tests (`engine/tests.rs`) drive it through the
//! plans.

mod derive;
pub mod envelope;
mod row;
mod state;

pub use derive::{StatusAfterEach, derive, derive_lean, derive_status};
pub use envelope::{Envelope, MessageType, Policy};
pub use row::Row;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use row::row_scan_as_serde;
pub use state::*;
