//! The integration tests: the built binary run as people and programs run
//! it, with `DISCUSS_NOW` pinned, a private ledger and a cleared
//! environment. One binary, so the suite links once: a module per command
//! (`ask`, `wake`, `reply`, `show`, `list` with `inbox`, `wait`, `verify`,
//! `events`, `ledger`, `call`, `mcp`, `admin` for fleets, quotas and the
//! kill-switch) and the cross-cutting ones (`statuses`, `errors`,
//! `surface`, `locations`, `supervise`, `integrity`, `race`, `crash`,
//! `cache`, `postgres`, `serve`, `console`, `examples`, `generated`, `fuzz_corpus`).
//!
//! `DISCUSS_TEST_LEDGER=postgres` runs what goes through `Env::new()` on a
//! database; `DISCUSS_STORM_KILLS` and `DISCUSS_RACE_ROUNDS` size the
//! stress rounds (small by default, full in `.ci/run`).

mod common;

mod admin;
mod approvals;
mod ask;
mod cache;
mod call;
mod chain;
mod console;
mod crash;
mod errors;
mod escalations;
mod events;
mod examples;
mod fuzz_corpus;
mod generated;
mod integrity;
mod ledger;
mod list;
mod live;
mod locations;
mod mcp;
mod postgres;
mod race;
mod reply;
mod search;
mod serve;
mod show;
mod spend;
mod statuses;
mod supervise;
mod surface;
mod token;
mod top;
mod traces;
mod verify;
mod wait;
mod wake;
