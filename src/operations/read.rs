//! The seed's `get_discussion`: one discussion, derived now.

use crate::discussion::{Discussion, derive};
use crate::engine::unknown_discussion;
use crate::error::Result;
use crate::ids;
use crate::session::Session;

/// Reads and derives one discussion (a unique id prefix names it too) and
/// the instant it was derived at; `unknown_discussion` when absent.
pub(crate) fn load(session: &Session, discussion_id: &str) -> Result<(Discussion, i64)> {
    let (discussion, now, _) = read(session, discussion_id, false)?;
    Ok((discussion, now))
}

/// The kill-switches as a reader at `now_ms` sees them, for the views
/// that mark halted discussions (rows read from the summaries carry none).
pub(crate) fn switches(session: &Session, now_ms: i64) -> Result<crate::global::Switches> {
    if !session.ledger.exists()? {
        return Ok(crate::global::Switches::default());
    }
    let view = session.ledger.view(&[])?;
    Ok(view.global(now_ms).switches())
}

/// `load`, and the first engaged switch that covers the discussion, read
/// in the same view.
pub(crate) fn load_with_halt(
    session: &Session,
    discussion_id: &str,
) -> Result<(Discussion, i64, Option<crate::global::Halt>)> {
    read(session, discussion_id, true)
}

/// One discussion derived now, and, when `halt` is asked, the switch that
/// covers it from the same view (only the views that show it pay for it).
fn read(
    session: &Session,
    discussion_id: &str,
    halt: bool,
) -> Result<(Discussion, i64, Option<crate::global::Halt>)> {
    ids::check_server_id("discussion_id", ids::DISCUSSION, discussion_id)?;
    let discussion_id = &crate::operations::resolve_discussion(session, discussion_id)?;
    let view = session.ledger.view(&[discussion_id])?;
    let now = session.now(view.last_at_ms());
    let discussion =
        derive(discussion_id, &view.discussion(discussion_id), now).ok_or_else(|| {
            let err = unknown_discussion(discussion_id).detail("ledger", session.ledger.location());
            crate::operations::near_match(err, session, discussion_id)
        })?;
    let halt = if halt {
        view.global(now).halt_of(discussion.covered())
    } else {
        None
    };
    Ok((discussion, now, halt))
}
