//! Pushes of a reserved turn to a connected MCP session of its agent
//! (`discuss mcp --agent A`): within a second of the reservation, as
//! `notifications/message` (level notice, unless the client asked for
//! less) and as `notifications/claude/channel` for hosts that take
//! channels. A push carries the pointer, never the body; a withdrawn
//! turn is pushed once as withdrawn.

use super::mcp::{AsSession, Wants};
use crate::discussion::{Attempt, AttemptState};
use rmcp::model::{CustomNotification, ServerNotification};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// How often the ledger's version is looked at: the turns are read again
/// when it changed, and at least every `PUSH_REREAD` (a turn lapses with
/// no write).
const PUSH_POLL: Duration = Duration::from_millis(50);
const PUSH_REREAD: Duration = Duration::from_secs(1);

/// What changed about the agent's turns since the last look.
enum Push {
    Reserved(String, Attempt),
    Withdrawn(String, Attempt, String),
    /// Answered or lapsed: forgotten, nothing said.
    Over(String),
}

/// Pushes `agent`'s turns to `peer` until the session ends.
pub(crate) async fn push_turns(
    session: Arc<dyn AsSession>,
    agent: String,
    peer: Peer<RoleServer>,
    wants: Arc<Wants>,
) {
    // The live turns pushed already: attempt → discussion.
    let mut pushed: HashMap<String, String> = HashMap::new();
    let mut seen: Option<(Option<u64>, std::time::Instant)> = None;
    loop {
        let looked = {
            let session = Arc::clone(&session);
            let agent = agent.clone();
            let known = pushed.clone();
            // On the blocking pool, the version's read too (a database's
            // client blocks).
            tokio::task::spawn_blocking(move || {
                let session = session.session();
                let version = session.ledger.version();
                if let Some((last, at)) = seen
                    && last == version
                    && at.elapsed() < PUSH_REREAD
                {
                    return (seen, Ok(Vec::new()));
                }
                let now = Some((version, std::time::Instant::now()));
                (now, changes(session, &agent, &known))
            })
            .await
        };
        let looked = looked.map(|(now, found)| {
            seen = now;
            found
        });
        let Ok(Ok(found)) = looked else {
            tokio::time::sleep(PUSH_POLL).await;
            continue;
        };
        for push in found {
            let (discussion_id, attempt, withdrawn) = match push {
                Push::Reserved(d, a) => {
                    pushed.insert(a.attempt_id.clone(), d.clone());
                    (d, a, None)
                }
                Push::Withdrawn(d, a, reason) => {
                    pushed.remove(&a.attempt_id);
                    (d, a, Some(reason))
                }
                Push::Over(attempt_id) => {
                    pushed.remove(&attempt_id);
                    continue;
                }
            };
            if send(
                &peer,
                &wants,
                &discussion_id,
                &attempt,
                withdrawn.as_deref(),
            )
            .await
            .is_err()
            {
                return; // the session is gone
            }
        }
        tokio::time::sleep(PUSH_POLL).await;
    }
}

/// The turns reserved for `agent` that are not in `known`, and those in
/// `known` that ended: withdrawn (a halt ended it) or simply over (the
/// agent answered, or it lapsed: nothing to say).
fn changes(
    session: &crate::session::Session,
    agent: &str,
    known: &HashMap<String, String>,
) -> crate::error::Result<Vec<Push>> {
    let mut found = Vec::new();
    let live = crate::operations::live::live_turns_of(session, agent)?;
    for (discussion_id, attempt_id) in &live {
        if !known.contains_key(attempt_id) {
            let (discussion, _) = crate::operations::read::load(session, discussion_id)?;
            if let Some(attempt) = discussion.attempt(attempt_id) {
                found.push(Push::Reserved(discussion_id.clone(), attempt.clone()));
            }
        }
    }
    for (attempt_id, discussion_id) in known {
        if live.iter().any(|(_, a)| a == attempt_id) {
            continue;
        }
        let (discussion, _) = crate::operations::read::load(session, discussion_id)?;
        match discussion.attempt(attempt_id) {
            Some(a)
                if a.state == AttemptState::Failed
                    && a.reason.as_deref() == Some("kill_switch") =>
            {
                found.push(Push::Withdrawn(
                    discussion_id.clone(),
                    a.clone(),
                    "halted".into(),
                ));
            }
            _ => found.push(Push::Over(attempt_id.clone())),
        }
    }
    Ok(found)
}

async fn send(
    peer: &Peer<RoleServer>,
    wants: &Wants,
    discussion_id: &str,
    attempt: &Attempt,
    withdrawn: Option<&str>,
) -> Result<(), rmcp::service::ServiceError> {
    let content = match withdrawn {
        None => crate::live::Pointer::default().render(discussion_id, attempt),
        Some(reason) => crate::live::withdrawn(discussion_id, attempt, reason),
    };
    let state = if withdrawn.is_some() {
        "withdrawn"
    } else {
        "reserved"
    };
    let meta = json!({
        "discussion_id": discussion_id,
        "attempt_id": attempt.attempt_id,
        "turn": attempt.turn.to_string(),
        "deadline_at": crate::clock::format_ms(attempt.deadline_ms),
        "state": state,
    });
    if wants.notices() {
        let mut data = meta.clone();
        data["pointer"] = Value::from(content.as_str());
        notify(
            peer,
            "notifications/message",
            json!({"level": "notice", "logger": "discuss", "data": data}),
        )
        .await?;
    }
    notify(
        peer,
        "notifications/claude/channel",
        json!({"content": content, "meta": meta}),
    )
    .await
}

async fn notify(
    peer: &Peer<RoleServer>,
    method: &str,
    params: Value,
) -> Result<(), rmcp::service::ServiceError> {
    peer.send_notification(ServerNotification::CustomNotification(
        CustomNotification::new(method, Some(params)),
    ))
    .await
}
