//! `discuss call TOOL [JSON|-]`: the seed's request objects, verbatim.

use super::{Context, ask, read_input, reply, show, wake};

/// The most a request object read from stdin may have: a payload string of
/// a whole envelope, escaped (at most six bytes a character), and the rest.
pub(crate) const MAX_REQUEST_BYTES: usize =
    6 * crate::discussion::envelope::MAX_ENVELOPE_BYTES + 65_536;
use crate::engine::{AskRequest, ReplyRequest, WakeRequest};
use crate::error::{Error, ErrorCode, Result};
use crate::output::{Answer, AskView, DiscussionView, Render, ReplyView, RowsView, WakeView};
use clap::Args;
use serde_json::{Map, Value};
use std::path::Path;

/// Take one of the seed's request objects and answer JSON (always).
///
/// TOOL is ask_peer, wake_agent, reply_discussion, get_discussion,
/// list_discussions or inbox. Unknown fields are refused. In ask_peer, max_turns, timeout_ms, turn_timeout_ms
/// and wake_peer default as in `discuss ask`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss call get_discussion '{\"discussion_id\":\"dsc_…\",\"include_receipts\":false}'\n  \
    echo '{\"agent_id\":\"agent-b\",...}' | discuss call wake_agent -"
)]
pub(crate) struct CallArgs {
    /// ask_peer, wake_agent, reply_discussion, get_discussion, list_discussions or inbox
    #[arg(value_name = "TOOL")]
    pub tool: String,
    /// The request object; `-` or nothing reads it from stdin (refused
    /// when stdin is a terminal and nothing is given)
    #[arg(value_name = "JSON|-")]
    pub request: Option<String>,
}

const TOOLS: [(&str, &[&str]); 6] = [
    (
        "ask_peer",
        &[
            "from_agent_id",
            "to_agent_id",
            "fleet_id",
            "payload",
            "max_turns",
            "timeout_ms",
            "turn_timeout_ms",
            "wake_peer",
            "idempotency_key",
        ],
    ),
    (
        "wake_agent",
        &[
            "agent_id",
            "discussion_id",
            "expected_head_message_id",
            "idempotency_key",
        ],
    ),
    (
        "reply_discussion",
        &[
            "agent_id",
            "discussion_id",
            "attempt_id",
            "reply_to_message_id",
            "type",
            "payload",
            "close",
            "idempotency_key",
        ],
    ),
    ("get_discussion", &["discussion_id", "include_receipts"]),
    ("list_discussions", &["status", "agent_id", "fleet_id"]),
    ("inbox", &["agent_id"]),
];

/// The tools `call` and `discuss mcp` take, with their fields.
pub(crate) fn tools() -> &'static [(&'static str, &'static [&'static str])] {
    &TOOLS
}

pub(crate) fn run(ctx: &Context, args: &CallArgs) -> Result<Answer<'static>> {
    let text = match args.request.as_deref() {
        // On a terminal nothing would come: say how instead of waiting.
        None if std::io::IsTerminal::is_terminal(&std::io::stdin()) => {
            return Err(Error::new(
                ErrorCode::Usage,
                format!("discuss call {} reads the request object from stdin, which is a terminal", args.tool),
            )
            .hint(format!("give it as an argument: discuss call {} '{{...}}'", args.tool))
            .hint("or pipe it: echo '{...}' | discuss call TOOL (or give - to read a terminal until Ctrl-D)"));
        }
        None | Some("-") => read_input(Path::new("-"), MAX_REQUEST_BYTES)?,
        Some(json) => json.to_owned(),
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("the request is not JSON: {e}"),
        )
    })?;
    let Value::Object(request) = value else {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "the request must be a JSON object",
        ));
    };
    Ok(Answer::new(answer(ctx, &args.tool, request, None)?))
}

/// One tool call, as `call` and `discuss mcp` both make it: the request
/// object is checked (unknown fields, types, then everything the command
/// checks) and run; the answer is what `call` prints. With `agent`, the
/// caller acts for that agent only: `ask_peer.from_agent_id` and
/// `reply_discussion.agent_id` must be it (`agent_mismatch`), and `inbox`
/// reads its inbox when no `agent_id` is given.
pub(crate) fn answer(
    ctx: &Context,
    tool: &str,
    request: Map<String, Value>,
    agent: Option<&str>,
) -> Result<Value> {
    // A tool caller changes fields, not flags: hints say so.
    answer_request(ctx, tool, request, agent).map_err(Error::for_tools)
}

fn answer_request(
    ctx: &Context,
    tool: &str,
    request: Map<String, Value>,
    agent: Option<&str>,
) -> Result<Value> {
    let Some((tool, fields)) = TOOLS.iter().find(|(name, _)| *name == tool) else {
        return Err(
            Error::new(ErrorCode::InvalidArgument, format!("unknown tool {tool:?}"))
                .detail("tool", tool)
                .hint(format!("tools: {}", TOOLS.map(|(name, _)| name).join(", "))),
        );
    };
    let request = Request::parse(request, fields)?;
    let pinned = |field: &str| -> Result<()> {
        let (Some(agent), Some(Value::String(given))) = (agent, request.0.get(field)) else {
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
    };
    let key = request.optional_string("idempotency_key")?;
    if let Some(key) = &key {
        crate::engine::idempotency::check_key(key)?;
    }
    let key = key.as_deref();
    let response = match *tool {
        "ask_peer" => {
            pinned("from_agent_id")?;
            let to = match request.0.get("to_agent_id") {
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| type_error("to_agent_id", "a string"))
                    })
                    .collect::<Result<Vec<_>>>()?,
                _ => vec![request.string("to_agent_id")?],
            };
            let ask = AskRequest::new(
                &request.string("from_agent_id")?,
                &to,
                &request.string("fleet_id")?,
                &request.string("payload")?,
                request.int("max_turns", 4)?,
                request.int("timeout_ms", 300_000)?,
                request.int("turn_timeout_ms", 60_000)?,
                request.bool("wake_peer", false)?,
            )?;
            let (outcome, replayed) = ask::perform(ctx, &ask, key)?;
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
        "wake_agent" => {
            let wake = WakeRequest::new(
                &request.string("agent_id")?,
                &super::resolve_discussion(ctx, &request.string("discussion_id")?)?,
                &request.string("expected_head_message_id")?,
            )?;
            let (discussion, attempt, replayed) = wake::perform(ctx, &wake, key)?;
            WakeView {
                discussion_id: discussion.id,
                attempt,
                supervised: None,
                replayed,
            }
            .value()
        }
        "reply_discussion" => {
            pinned("agent_id")?;
            let reply = ReplyRequest::new(
                &request.string("agent_id")?,
                &super::resolve_discussion(ctx, &request.string("discussion_id")?)?,
                &request.string("attempt_id")?,
                &request.string("reply_to_message_id")?,
                &request.string("type")?,
                &request.string("payload")?,
                request.bool("close", false)?,
            )?;
            let (discussion, message_id, replayed) = reply::perform(ctx, &reply, key)?;
            ReplyView {
                discussion,
                message_id,
                replayed,
            }
            .value()
        }
        "list_discussions" => {
            let statuses = match request.0.get("status") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::String(s)) => vec![s.clone()],
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| type_error("status", "a status or a list of them"))
                    })
                    .collect::<Result<Vec<_>>>()?,
                Some(_) => return Err(type_error("status", "a status or a list of them")),
            };
            let statuses = crate::lists::parse_statuses(&statuses)?;
            let agent = request.optional_string("agent_id")?;
            let fleet = request.optional_string("fleet_id")?;
            let (rows, now_ms) =
                crate::lists::listed(ctx, &statuses, agent.as_deref(), fleet.as_deref())?;
            rows_json(ctx, rows, now_ms)
        }
        "inbox" => {
            let given = request.optional_string("agent_id")?;
            let Some(agent) = given.as_deref().or(agent) else {
                return Err(
                    Error::new(ErrorCode::InvalidArgument, "agent_id is required")
                        .detail("field", "agent_id"),
                );
            };
            let (rows, now_ms) = crate::lists::inbox_rows(ctx, agent)?;
            rows_json(ctx, rows, now_ms)
        }
        _ => {
            let (discussion, now_ms) = show::load(ctx, &request.string("discussion_id")?)?;
            DiscussionView {
                discussion,
                now_ms,
                receipts: request.bool("include_receipts", true)?,
            }
            .value()
        }
    };
    Ok(response)
}

/// `{"discussions":[...]}`, as `list --json` and `inbox --json` print it.
fn rows_json(ctx: &Context, rows: Vec<crate::discussion::Row>, now_ms: i64) -> Value {
    RowsView {
        rows,
        now_ms,
        empty: String::new(),
        ledger: &ctx.ledger,
    }
    .value()
}

struct Request(Map<String, Value>);

fn type_error(field: &str, expected: &str) -> Error {
    Error::new(
        ErrorCode::InvalidArgument,
        format!("{field} must be {expected}"),
    )
    .detail("field", field)
}

impl Request {
    fn parse(map: Map<String, Value>, fields: &[&str]) -> Result<Request> {
        if let Some(unknown) = map.keys().find(|k| !fields.contains(&k.as_str())) {
            return Err(Error::new(
                ErrorCode::UnknownField,
                format!("unknown field {unknown:?}"),
            )
            .detail("field", unknown.as_str())
            .detail("allowed", fields.to_vec())
            .hint(format!("allowed fields: {}", fields.join(", "))));
        }
        Ok(Request(map))
    }

    fn string(&self, field: &str) -> Result<String> {
        match self.0.get(field) {
            Some(Value::String(s)) => Ok(s.clone()),
            None | Some(Value::Null) => Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("{field} is required"),
            )
            .detail("field", field)),
            Some(_) if field == "payload" => Err(type_error(field, "a string of serialized JSON")
                .hint(r#"serialize the body: "payload": "{\"body\":\"...\"}""#)),
            Some(_) => Err(type_error(field, "a string")),
        }
    }

    fn optional_string(&self, field: &str) -> Result<Option<String>> {
        match self.0.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(type_error(field, "a string")),
        }
    }

    fn int(&self, field: &str, default: i64) -> Result<i64> {
        match self.0.get(field) {
            None | Some(Value::Null) => Ok(default),
            Some(value) => value
                .as_i64()
                .ok_or_else(|| type_error(field, "an integer")),
        }
    }

    fn bool(&self, field: &str, default: bool) -> Result<bool> {
        match self.0.get(field) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(type_error(field, "true or false")),
        }
    }
}
