//! `discuss`: bounded two-agent discussions on an append-only ledger.
//!
//! The ledger (`ledger`) is the only source of truth; `discussion` derives
//! state from it as a pure function; `engine` plans writes; `operations`
//! performs them (and the reads) for every front-end; `tools` is the one
//! table of the seed's tools; `commands` are the CLI on top, `app` the
//! process edge.

// Every line for a person on stderr goes through `say!` or
// `output::to_stderr`, written whole (see there).
#![deny(clippy::print_stderr)]

/// A line on stderr (`format!` arguments, the `\n` added), written whole
/// with one `write` (`output::to_stderr`).
macro_rules! say {
    ($($arg:tt)*) => {{
        let mut line = format!($($arg)*);
        line.push('\n');
        $crate::output::to_stderr(&line);
    }};
}

// What the binary, the tests, the fuzz target and the benchmark use; the
// rest is the crate's own.
pub mod allocator;
pub mod app;
pub mod assets;
pub mod discussion;
pub mod engine;
pub mod error;
// The fuzz target's entry points: built for the tests and for the fuzz
// crate (feature `fuzzing`), not shipped in the library otherwise.
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod global;
pub mod record;
pub mod spend;

mod cli;
mod clock;
mod commands;
mod complete;
mod credentials;
mod escape;
mod ids;
mod ledger;
mod live;
mod operations;
mod options;
mod output;
mod progress;
mod regular_file;
mod seal;
mod search;
mod serve;
mod session;
mod supervisor;
mod tools;
mod top;
mod traces;
mod user;

/// The tools `discuss call` and `discuss mcp` take, each with its fields.
pub fn call_tools() -> Vec<(&'static str, Vec<&'static str>)> {
    tools::TOOLS
        .iter()
        .map(|tool| (tool.name, tool.fields.iter().map(|f| f.name).collect()))
        .collect()
}

/// The SQL statements a PostgreSQL ledger runs to find its lines, each
/// with what it is for: the tests check their plans.
pub fn postgres_lookups() -> &'static [(&'static str, &'static str)] {
    &ledger::POSTGRES_LOOKUPS
}
