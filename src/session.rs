//! What a command works with besides its arguments, and all a supervised
//! turn needs of it: the ledger, the clock, and who acts.

use crate::clock::Clock;
use crate::engine::Stamp;
use crate::error::{Error, ErrorCode, Result};
use crate::ledger::Ledger;
use std::path::Path;

pub(crate) struct Session {
    pub ledger: Ledger,
    pub clock: Clock,
    /// Recorded as `by` on every record written.
    pub actor: String,
    /// Whether the ledger is the default one (no --ledger, no DISCUSS_LEDGER).
    pub defaulted_ledger: bool,
}

impl Session {
    /// The ledger at `ledger` (the default path when `None`) keeping
    /// `summarize`'s summaries, the clock (`DISCUSS_NOW`), and `actor` (the
    /// OS user name when `None`). `cli::GlobalArgs::session` is the one
    /// caller that turns options into these.
    pub(crate) fn new(
        ledger: Option<&Path>,
        actor: Option<&str>,
        allow_network_fs: bool,
        summarize: crate::ledger::Summarize,
    ) -> Result<Session> {
        let defaulted_ledger = ledger.is_none_or(|l| l.as_os_str().is_empty());
        let location = match ledger {
            Some(location) if !location.as_os_str().is_empty() => location.to_path_buf(),
            _ => crate::user::default_ledger_path().ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidArgument,
                    "no ledger path: neither HOME nor XDG_STATE_HOME is set",
                )
                .hint("pass --ledger PATH or set DISCUSS_LEDGER")
            })?,
        };
        let actor = match actor {
            Some(actor) => actor.to_owned(),
            None => crate::user::user_name().unwrap_or_else(|| "unknown".into()),
        };
        if actor.trim().is_empty() || actor.chars().any(char::is_control) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("actor {actor:?} is empty or has control characters"),
            ));
        }
        Ok(Session {
            ledger: Ledger::at(location, allow_network_fs)?.summarize_with(summarize),
            clock: Clock::from_env()?,
            actor,
            defaulted_ledger,
        })
    }

    /// Time and actor for records written after a ledger whose newest
    /// record is at `last_at_ms`: never earlier than that (a clock behind
    /// uses its time), unless that record is more than the allowed skew
    /// ahead of this clock (`ledger.md`, "Clock skew"): a record from a
    /// clock far ahead never moves anyone else's time.
    pub(crate) fn stamp(&self, last_at_ms: Option<i64>) -> Stamp {
        let verified = VERIFIED_TOKEN.with_borrow(Clone::clone);
        Stamp {
            at_ms: reader_time(self.clock.now_ms(), last_at_ms),
            by: match &verified {
                Some(Verified {
                    token_id,
                    names_author: true,
                }) => token_id.clone(),
                _ => self.actor.clone(),
            },
            token_id: verified.map(|v| v.token_id),
        }
    }

    /// Now, for readers: as `stamp`.
    pub(crate) fn now(&self, last_at_ms: Option<i64>) -> i64 {
        self.stamp(last_at_ms).at_ms
    }
}

/// `max(clock, newest)` when the newest record is not more than the allowed
/// skew ahead of the clock; else the clock. (The newest record that is not
/// ahead is not kept apart, so while one is ahead a writer may stamp up to
/// the allowed skew below an earlier record; `verify` tolerates that.)
pub(crate) fn reader_time(clock_ms: i64, last_at_ms: Option<i64>) -> i64 {
    match last_at_ms {
        Some(last) if last <= clock_ms.saturating_add(crate::clock::MAX_SKEW_MS) => {
            last.max(clock_ms)
        }
        _ => clock_ms,
    }
}

thread_local! {
    /// The token the request this thread works for was verified by
    /// (`serve`, `as_principal`): `Session::stamp` writes it on every record.
    /// One session serves every request of a server, each on a thread of
    /// its own while it works, so the caller is the thread's, not the
    /// session's.
    static VERIFIED_TOKEN: std::cell::RefCell<Option<Verified>> =
        const { std::cell::RefCell::new(None) };
}

/// The token a thread's request was verified by, and whether its id is
/// also the records' `by` (the console's changes: the person at the page
/// is known only by their token).
#[derive(Clone)]
struct Verified {
    token_id: String,
    names_author: bool,
}

/// Runs `work` for a request verified by `principal`'s token: every
/// record it writes carries the token's id (as its `by` too when
/// `names_author`), and every read and write it makes checks in its own
/// read that the token is still good (for a write, under the lock, in the
/// step that appends). When `work` read nothing that could check it (a
/// refusal of its input), one read of its own does before any answer.
pub(crate) fn as_principal<T>(
    session: &Session,
    principal: &crate::credentials::Principal,
    names_author: bool,
    work: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let clock = session.clock;
    let check = {
        let principal = principal.clone();
        move |global: &crate::global::Global, last_at_ms: Option<i64>| {
            let now = reader_time(clock.now_ms(), last_at_ms);
            crate::credentials::still_good(global, &principal, now)
        }
    };
    let token_id = Some(principal.token_id.as_str());
    let (answer, checked) =
        crate::ledger::gate::within(check.clone(), || verified_as(token_id, names_author, work));
    let refused = matches!(&answer, Err(err) if err.code == ErrorCode::Unauthorized);
    if checked || refused {
        return answer;
    }
    let (read, _) = crate::ledger::gate::within(check, || session.ledger.view(&[]));
    read.and(answer)
}

fn verified_as<T>(token_id: Option<&str>, names_author: bool, work: impl FnOnce() -> T) -> T {
    struct Restore(Option<Verified>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let earlier = self.0.take();
            VERIFIED_TOKEN.with_borrow_mut(|token| *token = earlier);
        }
    }
    let verified = token_id.map(|token_id| Verified {
        token_id: token_id.to_owned(),
        names_author,
    });
    let earlier = VERIFIED_TOKEN.with_borrow_mut(|token| std::mem::replace(token, verified));
    let _restore = Restore(earlier);
    work()
}
