//! `discuss`: bounded two-agent discussions on an append-only ledger.
//!
//! The ledger (`ledger`) is the only source of truth; `discussion` derives
//! state from it as a pure function; `engine` plans writes; `commands` are
//! the CLI on top.

pub mod app;
pub mod assets;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod complete;
pub mod discussion;
pub mod engine;
pub mod error;
pub mod escape;
pub mod fuzzing;
pub mod global;
pub mod ids;
pub mod ledger;
pub mod lists;
pub mod output;
pub mod progress;
pub mod record;
pub mod session;
pub mod supervisor;
pub mod user;
