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

/// Whom a call acts for.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Caller<'a> {
    /// The one agent the caller acts for (`mcp --agent`, a `serve` agent
    /// token): `ask_peer.from_agent_id` and `reply_discussion.agent_id`
    /// must be it (`agent_mismatch`), and `inbox` reads its inbox when no
    /// `agent_id` is given.
    pub agent: Option<&'a str>,
    /// A `serve` agent token, which holds no ledger: `wake_agent.agent_id`
    /// must be its agent too, `inbox` reads only its own, and it reads only
    /// the discussions it takes part in (`forbidden`; lists are filtered).
    pub own_only: bool,
}

impl<'a> Caller<'a> {
    /// The agent whose discussions alone may be read, if reads are bound.
    fn reader(&self) -> Option<&'a str> {
        self.agent.filter(|_| self.own_only)
    }
}

/// The answer to one call of `tool` for `caller`: the request object is
/// checked (unknown fields, types, then everything the command checks)
/// and run.
pub(crate) fn answer(
    session: &Session,
    tool: &str,
    request: Map<String, Value>,
    caller: Caller<'_>,
) -> Result<Value> {
    // A tool caller changes fields, not flags: hints say so.
    answer_request(session, tool, request, caller).map_err(Error::for_tools)
}

fn answer_request(
    session: &Session,
    tool: &str,
    request: Map<String, Value>,
    caller: Caller<'_>,
) -> Result<Value> {
    let agent = caller.agent;
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
            pinned(&request, caller, "from_agent_id")?;
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
            )?
            .with_budgets(
                request.given("max_tokens"),
                request.dollars("max_cost_usd")?,
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
            if caller.own_only {
                pinned(&request, caller, "agent_id")?;
            }
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
            pinned(&request, caller, "agent_id")?;
            let reply = ReplyRequest::new(
                &request.string("agent_id")?,
                &operations::resolve_discussion(session, &request.string("discussion_id")?)?,
                &request.string("attempt_id")?,
                &request.string("reply_to_message_id")?,
                &request.string("type")?,
                &request.string("payload")?,
                request.bool("close")?,
            )?
            .with_usage(request.usage("usage")?);
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
            let filter = agent.as_deref().or(caller.reader());
            let (mut rows, now_ms) = lists::listed(session, &statuses, filter, fleet.as_deref())?;
            if let Some(reader) = caller.reader() {
                rows.retain(|row| row.participants.iter().any(|p| p == reader));
            }
            rows_json(rows, now_ms)
        }
        Operation::Inbox => {
            if caller.own_only {
                pinned(&request, caller, "agent_id")?;
            }
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
            let (mut discussion, now_ms) =
                operations::read::load(session, &request.string("discussion_id")?)?;
            if let Some(reader) = caller.reader() {
                forbid_unless_taking_part(&discussion, reader)?;
            }
            if caller.agent.is_some() {
                discussion.hide_operator_details();
            }
            DiscussionView {
                discussion,
                now_ms,
                receipts: request.bool("include_receipts")?,
            }
            .value()
        }
    })
}

/// `forbidden` unless `agent` is the asker or the peer of `discussion`.
pub(crate) fn forbid_unless_taking_part(
    discussion: &crate::discussion::Discussion,
    agent: &str,
) -> Result<()> {
    let takes_part = discussion
        .root
        .as_ref()
        .is_some_and(|root| root.asker == agent || root.peer == agent);
    if takes_part {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::Forbidden,
        format!(
            "{agent} takes no part in {}: an agent token reads only its own discussions",
            discussion.id
        ),
    )
    .detail("discussion_id", discussion.id.as_str())
    .detail("agent_id", agent))
}

/// `agent_mismatch` when the server acts for `agent` and `field` names
/// another one.
fn pinned(request: &Request, caller: Caller<'_>, field: &str) -> Result<()> {
    let (Some(agent), Some(Value::String(given))) = (caller.agent, request.given(field)) else {
        return Ok(());
    };
    if given == agent {
        return Ok(());
    }
    let (acts, elsewhere) = if caller.own_only {
        ("this token acts", "use a token of its own")
    } else {
        ("this server acts", "run a server of its own")
    };
    Err(Error::new(
        ErrorCode::AgentMismatch,
        format!("{field} is {given}, but {acts} for {agent}"),
    )
    .detail("field", field)
    .detail("agent_id", agent)
    .hint(format!(
        "set {field} to {agent}, or {elsewhere} for {given}"
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
