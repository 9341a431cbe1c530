//! The live set: which discussions may still be `open` or `active`.
//!
//! Every discussion is terminal by its conversation deadline: the root's
//! `at_ms` plus `timeout_ms`, at most 15 minutes, and every attempt's
//! deadline is clamped to it. A discussion whose newest record is 15
//! minutes old is therefore terminal whatever the clock says next, and only
//! a new line (which refreshes it here) could change it (into `invalid`).
//! So the readers that look for open or active discussions (`inbox`, `list
//! --status open`) derive only the discussions touched in the last 15
//! minutes of their clock, not every discussion ever written.
//!
//! The set is the `CAPACITY` most recently touched discussions with their
//! newest `at_ms`, and the newest `at_ms` of any discussion it let go. A
//! reader trusts it only when nothing it let go can still be live; else it
//! derives every discussion, as without the set. No clock is involved in
//! keeping it, so the cache stays a pure function of the ledger.

use super::hash::IdHashMap;
use serde::{Deserialize, Serialize};

/// How many discussions the set holds (`DISCUSS_CACHE_LIVE_CAPACITY` in
/// the tests).
pub(crate) const CAPACITY: usize = 256;

/// The longest conversation: the most `timeout_ms` may be (15 min).
pub(crate) const MAX_CONVERSATION_MS: i64 = crate::discussion::envelope::TIMEOUT_MS.1;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct LiveSet {
    /// Discussion id → the newest `at_ms` of its records (a rebuild
    /// touches it at every line: hashed by `hash64`, not SipHash).
    touched: IdHashMap<String, i64>,
    /// The newest `at_ms` of a discussion let go to keep the set small.
    let_go: Option<i64>,
}

impl LiveSet {
    /// A record of `discussion_id` at `at_ms`.
    pub(crate) fn touch(&mut self, discussion_id: &str, at_ms: i64) {
        match self.touched.get_mut(discussion_id) {
            Some(newest) => *newest = (*newest).max(at_ms),
            None => {
                self.touched.insert(discussion_id.to_owned(), at_ms);
            }
        }
        // Down to half at once: a rebuild touches every discussion, and
        // selecting the newest on each one past the capacity would cost
        // the capacity every time.
        if self.touched.len() > capacity() {
            self.shrink((capacity() / 2).max(1));
        }
    }

    /// Lets go of the least recently touched discussions beyond `keep`.
    fn shrink(&mut self, keep: usize) {
        let mut times: Vec<i64> = self.touched.values().copied().collect();
        // Keep the `keep` newest; ties at the cut go too (the cut must be
        // one time, so that `let_go` covers all that left).
        let at = times.len() - keep;
        let (_, cut, _) = times.select_nth_unstable(at - 1);
        let cut = *cut;
        self.touched.retain(|_, t| *t > cut);
        self.let_go = Some(self.let_go.map_or(cut, |g| g.max(cut)));
    }

    /// The discussions that may be live for a reader at `now_ms`, sorted;
    /// `None` when one the set let go may be, and only deriving every
    /// discussion can tell.
    pub(crate) fn candidates(&self, now_ms: i64) -> Option<Vec<&str>> {
        let live = |newest: i64| newest.saturating_add(MAX_CONVERSATION_MS) > now_ms;
        if self.let_go.is_some_and(live) {
            return None;
        }
        let mut ids: Vec<&str> = self
            .touched
            .iter()
            .filter(|(_, t)| live(**t))
            .map(|(id, _)| id.as_str())
            .collect();
        ids.sort_unstable();
        Some(ids)
    }
}

fn capacity() -> usize {
    super::failpoint::live_capacity(CAPACITY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_the_newest_and_knows_what_it_let_go() {
        let mut set = LiveSet::default();
        for i in 0..(CAPACITY as i64 + 10) {
            set.touch(&format!("dsc_{i:05}"), i * 1000);
        }
        // Past the capacity it keeps the newest half: 2049 entries at that
        // point, then the 9 more.
        let kept = set.touched.len();
        assert!(kept <= CAPACITY && kept > CAPACITY / 2, "{kept}");
        let newest_let_go = (CAPACITY as i64 + 10 - kept as i64 - 1) * 1000;
        assert_eq!(set.let_go, Some(newest_let_go));
        // Long after everything: nothing live, and the set can say so.
        assert_eq!(set.candidates(i64::MAX - 1), Some(vec![]));
        // Within 15 minutes of something it let go: it cannot.
        assert_eq!(
            set.candidates(newest_let_go + MAX_CONVERSATION_MS - 1),
            None
        );
        // A discussion touched again with an older time keeps its newest.
        let last = format!("dsc_{:05}", CAPACITY + 9);
        set.touch(&last, 1);
        assert_eq!(set.touched[&last], (CAPACITY as i64 + 9) * 1000);
        let now = (CAPACITY as i64 + 9) * 1000 + MAX_CONVERSATION_MS - 1;
        assert_eq!(set.candidates(now), Some(vec![last.as_str()]));
    }
}
