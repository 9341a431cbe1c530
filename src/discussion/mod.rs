//! The pure derivation of discussions from ledger records.

mod derive;
pub mod envelope;
mod row;
mod state;

pub use derive::derive;
pub use envelope::{Envelope, MessageType, Policy};
pub use row::Row;
pub use state::*;
