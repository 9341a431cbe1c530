//! Polling: what `wait` and a supervised turn both do while something else
//! (another agent, the child) moves a discussion on. The ledger is read
//! again only when it changed; the clock moves statuses too, so the
//! caller derives again on every tick.

use crate::error::Result;
use crate::session::Session;
use std::time::Duration;

/// Notices that the ledger changed since it was last read.
pub(crate) struct Changes {
    /// The version last read; `None` before the first read.
    seen: Option<Option<u64>>,
}

impl Changes {
    /// As the ledger is now.
    pub(crate) fn from_now(session: &Session) -> Changes {
        Changes {
            seen: Some(session.ledger.version()),
        }
    }

    /// Not read yet: the first look is always fresh.
    pub(crate) fn unseen() -> Changes {
        Changes { seen: None }
    }

    /// The ledger's version, when it changed since it was last seen.
    pub(crate) fn fresh(&self, session: &Session) -> Option<Option<u64>> {
        let version = session.ledger.version();
        (self.seen != Some(version)).then_some(version)
    }

    /// The ledger was read at `version`.
    pub(crate) fn seen(&mut self, version: Option<u64>) {
        self.seen = Some(version);
    }
}

/// Calls `tick` every `interval` until it answers (or fails).
pub(crate) fn every<T>(
    interval: Duration,
    mut tick: impl FnMut() -> Result<Option<T>>,
) -> Result<T> {
    loop {
        if let Some(done) = tick()? {
            return Ok(done);
        }
        std::thread::sleep(interval);
    }
}
