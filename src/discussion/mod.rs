//! The pure derivation of discussions from ledger records.

mod derive;
pub mod envelope;
mod state;

pub use derive::derive;
pub use envelope::{Envelope, MessageType, Policy};
pub use state::*;

#[cfg(test)]
mod tests;
