//! Live sessions: finding the turn reserved for an agent, and its pickup
//! (`discuss turn`, the Claude Code hook, `take_turn`, `GET /v1/turn`); the
//! `delivered` receipt of `wake --into`.

use crate::discussion::{Attempt, Discussion, Status};
use crate::engine::{plan_pickup, plan_pointer_delivered};
use crate::error::{Error, ErrorCode, Result};
use crate::session::Session;
use std::time::{Duration, Instant};

/// How often a wait for a turn looks at the ledger (when it changed).
const TURN_POLL: Duration = Duration::from_millis(50);

/// A turn as its agent takes it: the discussion, and the attempt after
/// the pickup.
#[derive(Debug, Clone)]
pub(crate) struct Turn {
    pub discussion: Discussion,
    pub attempt: Attempt,
}

/// The turn reserved for `agent` now, if any: (discussion, attempt) of
/// the live attempt with the earliest deadline.
pub(crate) fn live_turn_of(session: &Session, agent: &str) -> Result<Option<(String, String)>> {
    Ok(live_turns_of(session, agent)?.into_iter().next())
}

/// Every turn reserved for `agent` now, the earliest deadline first.
pub(crate) fn live_turns_of(session: &Session, agent: &str) -> Result<Vec<(String, String)>> {
    crate::ids::check_name("agent_id", agent)?;
    if !session.ledger.exists()? {
        return Ok(Vec::new());
    }
    let (rows, now) = super::lists::listed(session, &[Status::Active], Some(agent), None)?;
    let mut live: Vec<(i64, String, String)> = rows
        .into_iter()
        .filter(|row| row.head_to_agent_id.as_deref() == Some(agent))
        .filter_map(|row| {
            let attempt = row.live_attempt_id?;
            let deadline = row.live_attempt_deadline_ms?;
            (now < deadline).then_some((deadline, row.id, attempt))
        })
        .collect();
    live.sort();
    Ok(live.into_iter().map(|(_, d, a)| (d, a)).collect())
}

/// Takes the turn reserved for `agent`: records the pickup the first
/// time (`started`, `via: "pickup"`). With `wait`, waits up to it for a
/// turn to be reserved: for a wake, never for a message. `no_live_turn`
/// without one (`wait_timeout` after a wait, unless `timeout_is_none`).
pub(crate) fn take_turn(
    session: &Session,
    agent: &str,
    wait: Option<Duration>,
    timeout_is_none: bool,
) -> Result<Turn> {
    let until = wait.map(|w| Instant::now() + w);
    let mut changes = super::watch::Changes::unseen();
    loop {
        if changes.fresh(session).is_some() {
            let version = session.ledger.version();
            if let Some((discussion_id, attempt_id)) = live_turn_of(session, agent)? {
                match pick_up(session, &discussion_id, &attempt_id) {
                    // It lapsed or ended between the list and the write:
                    // as if there were none.
                    Err(err) if err.code == ErrorCode::NoLiveTurn => {}
                    other => return other,
                }
            }
            changes.seen(version);
        }
        match until {
            Some(until) if Instant::now() < until => std::thread::sleep(TURN_POLL),
            Some(_) if !timeout_is_none => {
                return Err(Error::new(
                    ErrorCode::WaitTimeout,
                    format!(
                        "no turn was reserved for {agent} within {} ms",
                        wait.unwrap_or_default().as_millis()
                    ),
                )
                .detail("agent_id", agent));
            }
            _ => return Err(no_live_turn(agent)),
        }
    }
}

fn no_live_turn(agent: &str) -> Error {
    Error::new(
        ErrorCode::NoLiveTurn,
        format!("no turn is reserved for {agent}"),
    )
    .detail("agent_id", agent)
    .hint_each(
        format!("wait for a wake: `discuss turn --agent {agent} --wait-ms 60000`"),
        "wait for a wake: take_turn with wait_ms".to_owned(),
    )
}

/// Records the pickup of `attempt_id` (once) and answers the turn.
fn pick_up(session: &Session, discussion_id: &str, attempt_id: &str) -> Result<Turn> {
    let (discussion, attempt) = session.ledger.append(&[discussion_id], |view| {
        let stamp = session.stamp(view.last_at_ms());
        let (records, turn) = plan_pickup(
            &view.global(stamp.at_ms),
            discussion_id,
            attempt_id,
            &view.discussion(discussion_id),
            &stamp,
        )?;
        Ok((records, turn))
    })?;
    Ok(Turn {
        discussion,
        attempt,
    })
}

/// Records that the pointer of `attempt_id` was typed into its session;
/// the discussion after it.
pub(crate) fn delivered(
    session: &Session,
    discussion_id: &str,
    attempt_id: &str,
) -> Result<Option<Discussion>> {
    session.ledger.append(&[discussion_id], |view| {
        plan_pointer_delivered(
            discussion_id,
            attempt_id,
            &view.discussion(discussion_id),
            &session.stamp(view.last_at_ms()),
        )
    })
}

/// The `discuss reply` command that answers `turn` in the same
/// environment: this very binary by its absolute path, the file ledger
/// it used (a database's URL is never printed: it may hold a password;
/// the session's `DISCUSS_LEDGER` names it), the ids, then a `result`
/// read from stdin for the agent to keep or change.
pub(crate) fn reply_argv(session: &Session, turn: &Turn) -> Vec<String> {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| std::path::absolute(p).ok())
        .map_or_else(|| "discuss".to_owned(), |p| p.display().to_string());
    let mut argv = vec![binary];
    if session.ledger.as_file().is_some()
        && let Ok(path) = std::path::absolute(session.ledger.location())
    {
        argv.extend(["--ledger".to_owned(), path.display().to_string()]);
    }
    let a = &turn.attempt;
    argv.extend(
        [
            "reply",
            "--agent",
            &a.agent_id,
            "--discussion",
            &turn.discussion.id,
            "--attempt",
            &a.attempt_id,
            "--reply-to",
            &a.head_message_id,
            "--type",
            "result",
            "--payload-file",
            "-",
        ]
        .map(str::to_owned),
    );
    argv
}
