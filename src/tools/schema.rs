//! The JSON Schemas of the tools, written from the table: what a call
//! takes (`input`) and what it answers (`output`), as MCP lists them.

use super::{Field, Kind, Need, Operation, Tool};
use crate::discussion::envelope::MAX_ENVELOPE_BYTES;
use serde_json::{Map, Value, json};

/// Ids of agents and fleets (`cli.md`, "IDs").
const NAME: &str = "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$";

/// What a call of `tool` takes. With a pinned agent (`--agent`), a field
/// the agent stands in for is not required.
pub(crate) fn input(tool: &Tool, pinned: bool) -> Map<String, Value> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in tool.fields {
        let description = match field.need {
            Need::UnlessPinned(instead) if pinned => instead,
            _ => field.description,
        };
        properties.insert(field.name.into(), property(field, description));
        let needed = match field.need {
            Need::Required => true,
            Need::Optional => false,
            Need::UnlessPinned(_) => !pinned,
        };
        if needed {
            required.push(field.name);
        }
    }
    let mut object = Map::new();
    object.insert("type".into(), "object".into());
    object.insert("properties".into(), properties.into());
    object.insert("required".into(), required.into());
    object.insert("additionalProperties".into(), false.into());
    object
}

fn property(field: &Field, description: &str) -> Value {
    match field.kind {
        Kind::Name | Kind::Peer => {
            json!({"type": "string", "pattern": NAME, "description": description})
        }
        Kind::ServerId(prefix) => {
            json!({"type": "string", "pattern": format!("^{prefix}"), "description": description})
        }
        Kind::Payload => json!({"type": "string", "maxLength": MAX_ENVELOPE_BYTES,
            "description": description}),
        Kind::Integer {
            range: (minimum, maximum),
            default,
        } => json!({"type": "integer", "minimum": minimum, "maximum": maximum,
            "default": default, "description": description}),
        Kind::Boolean { default } => {
            json!({"type": "boolean", "default": default, "description": description})
        }
        Kind::OneOf(values) => {
            json!({"type": "string", "enum": values, "description": description})
        }
        Kind::Statuses => json!({"anyOf": [
            {"type": "string", "enum": super::STATUSES},
            {"type": "array", "items": {"type": "string", "enum": super::STATUSES}},
        ], "description": description}),
        Kind::Tokens => json!({"type": ["integer", "null"], "minimum": 1,
            "maximum": crate::spend::MAX_TOKENS, "description": description}),
        Kind::Dollars => json!({"type": ["number", "null"], "exclusiveMinimum": 0,
            "maximum": crate::spend::MAX_USD.to_json(), "description": description}),
        Kind::Usage => {
            let tokens = json!({"type": "integer", "minimum": 0,
                "maximum": crate::spend::MAX_TOKENS});
            json!({"type": ["object", "null"], "properties": {
                "input_tokens": tokens, "output_tokens": tokens,
                "cost_usd": {"type": "number", "minimum": 0,
                    "maximum": crate::spend::MAX_USD.to_json()},
            }, "additionalProperties": false, "description": description})
        }
        Kind::IdempotencyKey => json!({"type": "string", "minLength": 1,
            "maxLength": crate::engine::idempotency::MAX_KEY_BYTES,
            "pattern": "^[A-Za-z0-9._:-]+$", "description": description}),
    }
}

/// What a call answers (`structuredContent`): on success the object
/// `discuss call` prints (the fields every answer has, with their types),
/// on a refusal the contract's error object. Clients check answers
/// against it, so it states only what always holds.
pub(crate) fn output(tool: &Tool) -> Map<String, Value> {
    let id = json!({"type": "string"});
    let maybe_id = json!({"type": ["string", "null"]});
    let status = json!({"type": "string", "enum": ["open", "active", "closed", "deadman",
        "expired", "exhausted", "invalid"]});
    let attempt = json!({"type": "object", "required": ["attempt_id", "agent_id", "turn",
        "head_message_id", "state", "reserved_at", "deadline_at"], "properties": {
        "attempt_id": id, "agent_id": id, "turn": {"type": "integer"}, "head_message_id": id,
        "state": {"type": "string"}, "reserved_at": id, "deadline_at": id}});
    let row = json!({"type": "object", "required": ["discussion_id", "fleet_id", "participants",
        "status", "turns_used", "max_turns", "head_message_id", "head_to_agent_id", "updated_at",
        "escalated", "live_attempt_id", "live_attempt_deadline_at", "tokens", "cost_usd"],
        "properties": {
        "discussion_id": id, "fleet_id": maybe_id, "participants": {"type": "array",
        "items": id}, "status": status, "turns_used": {"type": "integer"},
        "max_turns": {"type": "integer"}, "head_message_id": maybe_id,
        "head_to_agent_id": maybe_id, "updated_at": id, "escalated": {"type": "boolean"},
        "live_attempt_id": maybe_id, "live_attempt_deadline_at": maybe_id,
        "tokens": {"type": "integer", "minimum": 0}, "cost_usd": {"type": "number", "minimum": 0}}});
    let (properties, required): (Value, &[&str]) = match tool.operation {
        Operation::Ask => (
            json!({"discussion_id": id, "root_message_id": id, "head_message_id": id,
                "status": status, "policy": {"type": "object"},
                "attempt": {"anyOf": [attempt, {"type": "null"}]},
                "replayed": {"type": "boolean"}}),
            &[
                "discussion_id",
                "root_message_id",
                "head_message_id",
                "status",
                "policy",
                "attempt",
            ],
        ),
        Operation::Wake => (
            json!({"discussion_id": id, "attempt": attempt, "replayed": {"type": "boolean"}}),
            &["discussion_id", "attempt"],
        ),
        Operation::Reply => (
            json!({"discussion_id": id, "message_id": id, "turn": {"type": "integer"},
                "status": status, "head_message_id": id, "replayed": {"type": "boolean"}}),
            &[
                "discussion_id",
                "message_id",
                "turn",
                "status",
                "head_message_id",
            ],
        ),
        Operation::Get => (
            json!({"discussion_id": id, "status": status, "participants": {"type": "array"},
                "policy": {"type": ["object", "null"]}, "turns_used": {"type": "integer"},
                "head": {"type": ["object", "null"]}, "transcript": {"type": "array"},
                "attempts": {"type": "array"}, "escalation": {"type": ["object", "null"]},
                "spend": {"type": "object"},
                "integrity_findings": {"type": "array"}}),
            &[
                "discussion_id",
                "status",
                "participants",
                "transcript",
                "attempts",
                "integrity_findings",
            ],
        ),
        Operation::TakeTurn => (
            json!({"discussion_id": id, "attempt": attempt, "head": {"type": "object",
                "required": ["message_id", "from_agent_id", "type", "body"]},
                "reply_argv": {"type": "array", "items": id}}),
            &["discussion_id", "attempt", "head", "reply_argv"],
        ),
        Operation::List | Operation::Inbox => (
            json!({"discussions": {"type": "array", "items": row}}),
            &["discussions"],
        ),
    };
    // A refusal carries the contract's error object in the same place
    // (clients check it against this schema too).
    let refusal = json!({"type": "object", "required": ["error"], "properties": {"error": {
        "type": "object", "required": ["code", "message", "details"], "properties": {
        "code": {"type": "string"}, "message": {"type": "string"},
        "details": {"type": "object"}}}}});
    let answer = json!({"type": "object", "required": required, "properties": properties});
    let mut object = Map::new();
    object.insert("type".into(), "object".into());
    object.insert("anyOf".into(), json!([answer, refusal]));
    object
}
