//! One tool call, as `call` and `discuss mcp` (and next HTTP) make it: the
//! request object is checked against the table, run through
//! `operations`, and answered as the object `discuss call` prints.

use super::Operation;
use super::request::Request;
use crate::engine::{AskRequest, ReplyRequest, WakeRequest};
use crate::error::{Error, ErrorCode, Result};
use crate::operations::{self, lists};
use crate::output::{AskView, DiscussionView, Render, ReplyView, RowsView};
use crate::session::Session;
use serde_json::{Map, Value};

/// The answer to one call of `tool`: the request object is checked
/// (unknown fields, types, then everything the command checks) and run.
/// With `agent`, the caller acts for that agent only:
/// `ask_peer.from_agent_id` and `reply_discussion.agent_id` must be it
/// (`agent_mismatch`), and `inbox` reads its inbox when no `agent_id` is
/// given.
pub(crate) fn answer(
    session: &Session,
    tool: &str,
    request: Map<String, Value>,
    agent: Option<&str>,
) -> Result<Value> {
    // A tool caller changes fields, not flags: hints say so.
    answer_request(session, tool, request, agent).map_err(Error::for_tools)
}

fn answer_request(
    session: &Session,
    tool: &str,
    request: Map<String, Value>,
    agent: Option<&str>,
) -> Result<Value> {
    let Some(tool) = super::find(tool) else {
        return Err(
            Error::new(ErrorCode::InvalidArgument, format!("unknown tool {tool:?}"))
                .detail("tool", tool)
                .hint(format!("tools: {}", super::names())),
        );
    };
    let request = Request::parse(tool, request)?;
    let key = request.optional_string("idempotency_key")?;
    if let Some(key) = &key {
        crate::engine::idempotency::check_key(key)?;
    }
    let key = key.as_deref();
    Ok(match tool.operation {
        Operation::Ask => {
            pinned(&request, agent, "from_agent_id")?;
            // A list is taken, to be refused as a group (as `ask --to a,b`).
            let to = match request.given("to_agent_id") {
                Some(Value::Array(_)) => request.strings("to_agent_id", "a string")?,
                _ => vec![request.string("to_agent_id")?],
            };
            let ask = AskRequest::new(
                &request.string("from_agent_id")?,
                &to,
                &request.string("fleet_id")?,
                &request.string("payload")?,
                request.int("max_turns")?,
                request.int("timeout_ms")?,
                request.int("turn_timeout_ms")?,
                request.bool("wake_peer")?,
            )?;
            let (outcome, replayed) = operations::ask::ask(session, &ask, key)?;
            AskView {
                discussion: outcome.discussion,
                attempt: outcome.attempt,
                supervised: None,
                replayed,
                // JSON only: no hint is shown.
                root_waits: false,
            }
            .value()
        }
        Operation::Wake => {
            let wake = WakeRequest::new(
                &request.string("agent_id")?,
                &operations::resolve_discussion(session, &request.string("discussion_id")?)?,
                &request.string("expected_head_message_id")?,
            )?;
            let (discussion, attempt, replayed) = operations::wake::wake(session, &wake, key)?;
            crate::output::WakeView {
                discussion_id: discussion.id,
                attempt,
                supervised: None,
                replayed,
            }
            .value()
        }
        Operation::Reply => {
            pinned(&request, agent, "agent_id")?;
            let reply = ReplyRequest::new(
                &request.string("agent_id")?,
                &operations::resolve_discussion(session, &request.string("discussion_id")?)?,
                &request.string("attempt_id")?,
                &request.string("reply_to_message_id")?,
                &request.string("type")?,
                &request.string("payload")?,
                request.bool("close")?,
            )?;
            let (discussion, message_id, replayed) =
                operations::reply::reply(session, &reply, key)?;
            ReplyView {
                discussion,
                message_id,
                replayed,
            }
            .value()
        }
        Operation::List => {
            let given = request.strings("status", "a status or a list of them")?;
            let statuses = lists::parse_statuses(&given)?;
            let agent = request.optional_string("agent_id")?;
            let fleet = request.optional_string("fleet_id")?;
            let (rows, now_ms) =
                lists::listed(session, &statuses, agent.as_deref(), fleet.as_deref())?;
            rows_json(rows, now_ms)
        }
        Operation::Inbox => {
            let given = request.optional_string("agent_id")?;
            let Some(agent) = given.as_deref().or(agent) else {
                return Err(
                    Error::new(ErrorCode::InvalidArgument, "agent_id is required")
                        .detail("field", "agent_id"),
                );
            };
            let (rows, now_ms) = lists::inbox_rows(session, agent)?;
            rows_json(rows, now_ms)
        }
        Operation::Get => {
            let (discussion, now_ms) =
                operations::read::load(session, &request.string("discussion_id")?)?;
            DiscussionView {
                discussion,
                now_ms,
                receipts: request.bool("include_receipts")?,
            }
            .value()
        }
    })
}

/// `agent_mismatch` when the server acts for `agent` and `field` names
/// another one.
fn pinned(request: &Request, agent: Option<&str>, field: &str) -> Result<()> {
    let (Some(agent), Some(Value::String(given))) = (agent, request.given(field)) else {
        return Ok(());
    };
    if given == agent {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::AgentMismatch,
        format!("{field} is {given}, but this server acts for {agent}"),
    )
    .detail("field", field)
    .detail("agent_id", agent)
    .hint(format!(
        "set {field} to {agent}, or run a server of its own for {given}"
    )))
}

/// `{"discussions":[...]}`, as `list --json` and `inbox --json` print it.
fn rows_json(rows: Vec<crate::discussion::Row>, now_ms: i64) -> Value {
    RowsView {
        rows,
        now_ms,
        empty: String::new(),
        known_ids: Vec::new(),
    }
    .value()
}
