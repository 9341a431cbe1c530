//! `discuss call TOOL [JSON|-]`: the seed's request objects, verbatim.

use super::{Context, ask, read_input, reply, show, wake};

/// The most a request object read from stdin may have: a payload string of
/// a whole envelope, escaped (at most six bytes a character), and the rest.
const MAX_REQUEST_BYTES: usize = 6 * crate::discussion::envelope::MAX_ENVELOPE_BYTES + 65_536;
use crate::engine::{AskRequest, ReplyRequest, WakeRequest};
use crate::error::{Error, ErrorCode, Result};
use crate::output::discussion_json;
use clap::Args;
use serde_json::{Map, Value};
use std::path::Path;

/// Take one of the seed's request objects and answer JSON (always).
///
/// TOOL is ask_peer, wake_agent, reply_discussion or get_discussion. Unknown
/// fields are refused. In ask_peer, max_turns, timeout_ms, turn_timeout_ms
/// and wake_peer default as in `discuss ask`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  discuss call get_discussion '{\"discussion_id\":\"dsc_…\",\"include_receipts\":false}'\n  \
    echo '{\"agent_id\":\"agent-b\",...}' | discuss call wake_agent -"
)]
pub struct CallArgs {
    /// ask_peer, wake_agent, reply_discussion or get_discussion
    #[arg(value_name = "TOOL")]
    pub tool: String,
    /// The request object; `-` or nothing reads it from stdin
    #[arg(value_name = "JSON|-")]
    pub request: Option<String>,
}

const TOOLS: [(&str, &[&str]); 4] = [
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
];

pub fn run(ctx: &Context, args: &CallArgs) -> Result<u8> {
    let Some((tool, fields)) = TOOLS.iter().find(|(name, _)| *name == args.tool) else {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("unknown tool {:?}", args.tool),
        )
        .detail("tool", args.tool.as_str())
        .hint("tools: ask_peer, wake_agent, reply_discussion, get_discussion"));
    };
    let text = match args.request.as_deref() {
        None | Some("-") => read_input(Path::new("-"), MAX_REQUEST_BYTES)?,
        Some(json) => json.to_owned(),
    };
    let request = Request::parse(&text, fields)?;
    let key = request.optional_string("idempotency_key")?;
    if let Some(key) = &key {
        crate::engine::idempotency::check_key(key)?;
    }
    let key = key.as_deref();
    let mark = |mut value: Value, replayed: bool| {
        if replayed {
            value["replayed"] = true.into();
        }
        value
    };
    let response = match *tool {
        "ask_peer" => {
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
            mark(ask::to_json(&outcome), replayed)
        }
        "wake_agent" => {
            let wake = WakeRequest::new(
                &request.string("agent_id")?,
                &request.string("discussion_id")?,
                &request.string("expected_head_message_id")?,
            )?;
            let (discussion, attempt, replayed) = wake::perform(ctx, &wake, key)?;
            mark(wake::to_json(&discussion, &attempt), replayed)
        }
        "reply_discussion" => {
            let reply = ReplyRequest::new(
                &request.string("agent_id")?,
                &request.string("discussion_id")?,
                &request.string("attempt_id")?,
                &request.string("reply_to_message_id")?,
                &request.string("type")?,
                &request.string("payload")?,
                request.bool("close", false)?,
            )?;
            let (discussion, message_id, replayed) = reply::perform(ctx, &reply, key)?;
            mark(reply::to_json(&discussion, &message_id), replayed)
        }
        _ => {
            let (discussion, _) = show::load(ctx, &request.string("discussion_id")?)?;
            discussion_json(&discussion, request.bool("include_receipts", true)?)
        }
    };
    ctx.out.print_json(&response);
    Ok(0)
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
    fn parse(text: &str, fields: &[&str]) -> Result<Request> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("the request is not JSON: {e}"),
            )
        })?;
        let Value::Object(map) = value else {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the request must be a JSON object",
            ));
        };
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
