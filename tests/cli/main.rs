//! The integration tests: the built binary run as people and programs run
//! it, with `DISCUSS_NOW` pinned, a private ledger and a cleared
//! environment. One binary, a module per area, so the suite links once.
//!
//! `DISCUSS_TEST_LEDGER=postgres` runs what goes through `Env::new()` on a
//! database; `DISCUSS_STORM_KILLS` and `DISCUSS_RACE_ROUNDS` size the
//! stress rounds (small by default, full in `.ci/run`).

mod common;

mod cache;
mod call;
mod crash;
mod edges;
mod errors;
mod events;
mod examples;
mod first_contact;
mod fuzz_corpus;
mod generated;
mod integrity;
mod mcp;
mod postgres;
mod race;
mod readers;
mod statuses;
mod supervise;
