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
    // GenAI's name for a tool's run, which viewers group tool calls by.
    let span = crate::traces::start(
        format!("execute_tool {tool}"),
        opentelemetry::trace::SpanKind::Internal,
        crate::traces::Parent::Inherited,
    );
    if span.is_on() {
        span.set("gen_ai.operation.name", "execute_tool");
        span.set("gen_ai.tool.name", tool.to_owned());
    }
    let asked_for = request
        .get("discussion_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    // A tool caller changes fields, not flags: hints say so.
    let answered = answer_request(session, tool, request, caller)
        .map_err(|err| {
            if caller.own_only {
                as_stranger(err)
            } else {
                err
            }
        })
        .map_err(Error::for_tools);
    crate::traces::outcome(&span, asked_for.as_deref(), &answered);
    answered
}

/// An error as an agent token reads it: a discussion it takes no part in
/// (or none at all) is the bare `unknown_discussion`, with no hint of a
/// near id, the ledger, or candidates; a conflicting idempotency key does
/// not say where it was used.
pub(crate) fn as_stranger(err: Error) -> Error {
    match err.code {
        ErrorCode::UnknownDiscussion => {
            let id = err
                .details
                .get("discussion_id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            crate::engine::unknown_discussion(&id)
        }
        ErrorCode::IdempotencyConflict => {
            let key = err.details.get("idempotency_key").cloned();
            let mut plain = Error::new(
                ErrorCode::IdempotencyConflict,
                "this idempotency key was used for another request",
            )
            .hint("a retry must repeat the original arguments; a new request needs a new key");
            if let Some(key) = key {
                plain = plain.detail("idempotency_key", key);
            }
            plain
        }
        _ => err,
    }
}

/// The discussion `given` names for `caller`. An agent token resolves a
/// prefix among its own discussions only, so candidates and matches never
/// name another's; a whole id is taken as it is (its operation refuses
/// one the agent takes no part in as unknown).
pub(crate) fn resolve_for(session: &Session, given: &str, caller: Caller<'_>) -> Result<String> {
    let Some(agent) = caller.reader() else {
        return operations::resolve_discussion(session, given);
    };
    if !operations::is_prefix_like(given) {
        return Ok(given.to_owned());
    }
    let (rows, _) = lists::listed(session, &[], Some(agent), None)?;
    let matches: Vec<&str> = rows
        .iter()
        .filter(|row| row.participants.iter().any(|p| p == agent))
        .map(|row| row.id.as_str())
        .filter(|id| id.starts_with(given))
        .collect();
    match matches.as_slice() {
        [] => Err(crate::engine::unknown_discussion(given)),
        [one] => Ok((*one).to_owned()),
        many => Err(operations::ambiguous(given, many)),
    }
}

/// One tool call: its request read by the table, then an arm per tool.
/// Long on purpose: it is the one dispatch every front-end shares.
fn answer_request(
    session: &Session,
    tool: &str,
    request: Map<String, Value>,
    caller: Caller<'_>,
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
                &resolve_for(session, &request.string("discussion_id")?, caller)?,
                &request.string("expected_head_message_id")?,
            )?
            .participant_only(caller.own_only);
            let (discussion, attempt, replayed) =
                operations::wake::wake(session, &wake, key, false)?;
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
                &resolve_for(session, &request.string("discussion_id")?, caller)?,
                &request.string("attempt_id")?,
                &request.string("reply_to_message_id")?,
                &request.string("type")?,
                &request.string("payload")?,
                request.bool("close")?,
            )?
            .with_usage(request.usage("usage")?)
            .participant_only(caller.own_only);
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
            rows_json(session, rows, now_ms)?
        }
        Operation::Inbox => {
            let agent = agent_asked(&request, caller)?;
            let (rows, now_ms) = lists::inbox_rows(session, &agent)?;
            rows_json(session, rows, now_ms)?
        }
        Operation::TakeTurn => {
            let agent = agent_asked(&request, caller)?;
            let wait = request.int("wait_ms")?;
            let wait = (wait > 0).then(|| std::time::Duration::from_millis(wait as u64));
            let turn = operations::live::take_turn(session, &agent, wait, true)?;
            let reply_argv = operations::live::reply_argv(session, &turn);
            crate::output::TurnView { turn, reply_argv }.value()
        }
        Operation::Get => {
            let id = resolve_for(session, &request.string("discussion_id")?, caller)?;
            let (mut discussion, now_ms, halted) = operations::read::load_with_halt(session, &id)?;
            if let Some(reader) = caller.reader() {
                hide_unless_taking_part(&discussion, reader)?;
            }
            if caller.agent.is_some() {
                discussion.hide_operator_details();
            }
            DiscussionView {
                discussion,
                now_ms,
                receipts: request.bool("include_receipts")?,
                halted,
            }
            .value()
        }
    })
}

/// `unknown_discussion`, exactly as for a discussion that does not
/// exist, unless `agent` is the asker or the peer of `discussion`.
pub(crate) fn hide_unless_taking_part(
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
    Err(crate::engine::unknown_discussion(&discussion.id))
}

/// The agent an `inbox` or `take_turn` is about: `agent_id`, else the
/// one the caller acts for (an agent token may name only its own).
fn agent_asked(request: &Request, caller: Caller<'_>) -> Result<String> {
    if caller.own_only {
        pinned(request, caller, "agent_id")?;
    }
    request
        .optional_string("agent_id")?
        .or_else(|| caller.agent.map(str::to_owned))
        .ok_or_else(|| {
            Error::new(ErrorCode::InvalidArgument, "agent_id is required")
                .detail("field", "agent_id")
        })
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
fn rows_json(session: &Session, rows: Vec<crate::discussion::Row>, now_ms: i64) -> Result<Value> {
    Ok(RowsView {
        rows,
        now_ms,
        empty: String::new(),
        known_ids: Vec::new(),
        live_turns: false,
        switches: operations::read::switches(session, now_ms)?,
    }
    .value())
}
