//! A check that every read and write made on this thread runs against the
//! state it read: `serve` checks a request's token there, in the very read
//! of the operation (for a write, under its lock), so a revoked token is
//! refused by the next operation and costs no read of its own.

use super::Excerpt;
use crate::error::Result;
use crate::global::Global;
use std::cell::RefCell;

type Check = Box<dyn Fn(&Global, Option<i64>) -> Result<()>>;

thread_local! {
    static GATE: RefCell<Option<(Check, bool)>> = const { RefCell::new(None) };
}

/// Runs `work` with `check` (given the global state and the newest
/// record's time) applied to every excerpt read or written on this thread;
/// returns what `work` returned and whether any excerpt was checked.
pub(crate) fn within<T>(
    check: impl Fn(&Global, Option<i64>) -> Result<()> + 'static,
    work: impl FnOnce() -> T,
) -> (T, bool) {
    /// Takes the check off the thread however `work` ends (a pool thread
    /// runs other work next).
    struct Lifted;
    impl Drop for Lifted {
        fn drop(&mut self) {
            GATE.with(|gate| gate.borrow_mut().take());
        }
    }
    GATE.with(|gate| *gate.borrow_mut() = Some((Box::new(check), false)));
    let lifted = Lifted;
    let done = work();
    let checked = GATE.with(|gate| gate.borrow().as_ref().is_some_and(|(_, checked)| *checked));
    drop(lifted);
    (done, checked)
}

/// The check of `within`, when one is set, on `excerpt`.
pub(crate) fn check(excerpt: &Excerpt) -> Result<()> {
    GATE.with(|gate| match &mut *gate.borrow_mut() {
        Some((check, checked)) => {
            check(&excerpt.global, excerpt.last_at_ms)?;
            *checked = true;
            Ok(())
        }
        None => Ok(()),
    })
}
