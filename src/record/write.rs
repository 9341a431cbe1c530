//! Writing a record: its JSON object and the chained lines of an
//! operation, as `discuss` appends them (`ledger.md`, "Operations of
//! several lines" and "Chained lines").

use super::*;

impl Record {
    /// The record as one JSON object, fields in a stable, readable order.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("v".into(), FORMAT_VERSION.into());
        map.insert("kind".into(), self.kind().into());
        map.insert("id".into(), self.id.clone().into());
        map.insert("at_ms".into(), self.at_ms.into());
        map.insert("by".into(), self.by.clone().into());
        if let Some(token_id) = &self.token_id
            && !matches!(self.body, Body::Credential(_))
        {
            map.insert("token_id".into(), token_id.clone().into());
        }
        // Before the payload, which stays a message's last field (the
        // cache's fast path reads a message line up to its payload).
        if let Some(idempotency) = &self.idempotency {
            map.insert("idempotency_key".into(), idempotency.key.clone().into());
            map.insert("request_digest".into(), idempotency.digest.clone().into());
        }
        let mut put = |key: &str, value: Value| {
            map.insert(key.into(), value);
        };
        match &self.body {
            Body::Message(m) => {
                put("fleet_id", m.fleet_id.clone().into());
                put("from_agent_id", m.from_agent_id.clone().into());
                put("to_agent_id", m.to_agent_id.clone().into());
                put("correlation_id", m.correlation_id.clone().into());
                put("payload", m.payload.clone().into());
            }
            Body::Receipt(r) => {
                put("receipt", r.receipt.clone().into());
                put("discussion_id", r.discussion_id.clone().into());
                let optional: [(&str, Option<Value>); 21] = [
                    ("attempt_id", r.attempt_id.clone().map(Value::from)),
                    ("agent_id", r.agent_id.clone().map(Value::from)),
                    ("turn", r.turn.map(Value::from)),
                    (
                        "head_message_id",
                        r.head_message_id.clone().map(Value::from),
                    ),
                    ("deadline_ms", r.deadline_ms.map(Value::from)),
                    ("pid", r.pid.map(Value::from)),
                    ("message_id", r.message_id.clone().map(Value::from)),
                    ("reason", r.reason.clone().map(Value::from)),
                    ("exit_code", r.exit_code.map(Value::from)),
                    ("signal", r.signal.map(Value::from)),
                    ("turns_used", r.turns_used.map(Value::from)),
                    ("detail", r.detail.clone().map(Value::from)),
                    ("usage", r.usage.as_deref().cloned()),
                    (
                        "escalation_receipt_id",
                        r.escalation_receipt_id.clone().map(Value::from),
                    ),
                    ("usage_unreadable", r.usage_unreadable.map(Value::from)),
                    ("approval_id", r.approval_id.clone().map(Value::from)),
                    ("rule", r.rule.as_deref().cloned()),
                    ("spend", r.spend.as_deref().cloned()),
                    ("expires_ms", r.expires_ms.map(Value::from)),
                    ("into", r.into.clone().map(Value::from)),
                    ("via", r.via.clone().map(Value::from)),
                ];
                for (key, value) in optional {
                    if let Some(value) = value {
                        put(key, value);
                    }
                }
            }
            Body::Fleet(f) => {
                put(
                    "op",
                    match f.op {
                        FleetOp::Add => "add",
                        FleetOp::Remove => "remove",
                    }
                    .into(),
                );
                put("fleet_id", f.fleet_id.clone().into());
                put("agent_id", f.agent_id.clone().into());
            }
            Body::KillSwitch(k) => {
                put("engaged", k.engaged.into());
                put("reason", k.reason.clone().into());
                if let Some(scope) = &k.scope {
                    put("scope", scope.to_json());
                }
            }
            Body::Quota(q) => {
                put("agent_id", q.agent_id.clone().into());
                if let Some(wakes) = q.wakes_per_hour {
                    put("wakes_per_hour", wakes.into());
                }
                if let Some(tokens) = q.tokens_per_hour {
                    put("tokens_per_hour", tokens.into());
                }
                if let Some(cost) = q.cost_usd_per_day {
                    put("cost_usd_per_day", cost.to_json());
                }
            }
            Body::Credential(c) => {
                put(
                    "op",
                    match c.op {
                        CredentialOp::Issue => "issue",
                        CredentialOp::Revoke => "revoke",
                    }
                    .into(),
                );
                put("token_id", c.token_id.clone().into());
                if c.op == CredentialOp::Issue {
                    put("agent_id", c.agent_id.clone().into());
                    put("role", c.role.map(Role::as_str).into());
                    put("sha256", c.sha256.clone().into());
                    put("expires_ms", c.expires_ms.into());
                }
            }
            Body::Gate(g) => {
                if let Some(scope) = &g.scope {
                    put("scope", scope.to_json());
                }
                put("engaged", g.engaged.into());
                let conditions: [(&str, Option<Value>); 5] = [
                    ("always", g.always.map(Value::from)),
                    ("from_turn", g.from_turn.map(Value::from)),
                    ("over_cost_usd", g.over_cost_usd.map(|c| c.to_json())),
                    ("over_tokens", g.over_tokens.map(Value::from)),
                    (
                        "approval_timeout_ms",
                        g.approval_timeout_ms.map(Value::from),
                    ),
                ];
                for (key, value) in conditions {
                    if let Some(value) = value {
                        put(key, value);
                    }
                }
            }
            Body::Import(i) => {
                put("lines", i.lines.into());
                put("chain_restarts", i.chain_restarts.clone().into());
                put("restart_prevs", i.restart_prevs.clone().into());
            }
        }
        Value::Object(map)
    }

    /// The record as one line, `\n` included, unchained (a line as another
    /// tool would append it; `discuss` writes `operation_lines`).
    pub fn to_line(&self) -> String {
        let mut line = self.to_json().to_string();
        line.push('\n');
        line
    }

    /// The lines of one operation, chained: the first names `prev` (the
    /// digest of the line before them), and `prev` becomes the last one's
    /// digest. When there are several, every line carries `op_id` (the
    /// first record's id) and the first also `op_lines`.
    pub fn operation_lines(records: &[Record], prev: &mut chain::Digest) -> String {
        let [first, ..] = records else {
            return String::new();
        };
        let mut lines = String::new();
        for (index, record) in records.iter().enumerate() {
            let mut json = record.to_json();
            if records.len() > 1 {
                if index == 0 {
                    json[OP_LINES] = records.len().into();
                }
                json[OP_ID] = first.id.clone().into();
            }
            let start = lines.len();
            lines.push_str(&json.to_string());
            chain::chain_last_line(&mut lines, start, prev);
        }
        lines
    }
}
