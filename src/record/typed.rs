//! One typed pass from a line's bytes to its `Record`: every field the
//! format names, of every kind, in one flat struct read straight into the
//! record's own strings (no `Value` between). `Record::parse_through_value`
//! stays the reference: whatever this pass does not take, or is not sure
//! of, it leaves to that one (`None`), so it never takes a line that one
//! refuses, nor reads one differently.

use super::*;
use std::borrow::Cow;

mod flat;
pub(super) use flat::flat_as_serde;

/// Lines with this many brackets or more may nest past serde_json's
/// recursion limit, which the ignored fields of a typed pass do not count:
/// left to the `Value` pass, which does.
const MOST_BRACKETS: usize = 100;

#[derive(Deserialize, Debug, PartialEq)]
struct Line<'a> {
    v: u64,
    #[serde(borrow)]
    kind: Cow<'a, str>,
    id: String,
    at_ms: i64,
    by: String,
    #[serde(default)]
    op_lines: Option<u64>,
    #[serde(default)]
    op_id: Option<String>,
    #[serde(default)]
    idempotency_key: Option<String>,
    #[serde(default)]
    request_digest: Option<String>,
    // message
    #[serde(default)]
    fleet_id: Option<String>,
    #[serde(default)]
    from_agent_id: Option<String>,
    #[serde(default)]
    to_agent_id: Option<String>,
    #[serde(default)]
    correlation_id: Option<String>,
    #[serde(default)]
    payload: Option<String>,
    // receipt
    #[serde(default)]
    receipt: Option<String>,
    #[serde(default)]
    discussion_id: Option<String>,
    #[serde(default)]
    attempt_id: Option<String>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    turn: Option<u32>,
    #[serde(default)]
    head_message_id: Option<String>,
    #[serde(default)]
    deadline_ms: Option<i64>,
    #[serde(default)]
    pid: Option<u32>,
    #[serde(default)]
    message_id: Option<String>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    exit_code: Option<i32>,
    #[serde(default)]
    signal: Option<i32>,
    #[serde(default)]
    turns_used: Option<u32>,
    #[serde(default)]
    detail: Option<String>,
    #[serde(default)]
    usage: Option<Box<Value>>,
    #[serde(default)]
    escalation_receipt_id: Option<String>,
    #[serde(default)]
    usage_unreadable: Option<bool>,
    #[serde(default)]
    approval_id: Option<String>,
    #[serde(default)]
    rule: Option<Box<Value>>,
    #[serde(default)]
    spend: Option<Box<Value>>,
    #[serde(default)]
    into: Option<String>,
    #[serde(default)]
    via: Option<String>,
    // fleet, credential
    #[serde(default)]
    op: Option<String>,
    // kill_switch
    #[serde(default)]
    engaged: Option<bool>,
    #[serde(default)]
    scope: Option<crate::record::Scope>,
    // quota
    #[serde(default)]
    wakes_per_hour: Option<u32>,
    #[serde(default)]
    tokens_per_hour: Option<u64>,
    #[serde(default)]
    cost_usd_per_day: Option<crate::spend::Usd>,
    // credential
    #[serde(default)]
    token_id: Option<String>,
    #[serde(default)]
    role: Option<Role>,
    #[serde(default)]
    sha256: Option<String>,
    #[serde(default)]
    expires_ms: Option<i64>,
}

/// The record on `line` and its mark, or `None` for the `Value` pass to
/// decide.
pub(super) fn parse(line: &[u8], line_no: usize) -> Option<(Record, OpMark)> {
    // serde_json reads a struct from an array too; the format's records
    // are objects only.
    let first = line
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))?;
    if *first != b'{' || memchr::memchr2_iter(b'[', b'{', line).count() >= MOST_BRACKETS {
        return None;
    }
    match flat::line(line) {
        Some(l) => record_of(l, line_no),
        None => record_of(serde_json::from_slice::<Line<'_>>(line).ok()?, line_no),
    }
}

/// The record a line's fields make. Its own function, never inlined: a
/// `Line` is a kilobyte, and where `parse` moved it itself, the compiler
/// at times copied it word by word (a thousand instructions a line).
#[inline(never)]
fn record_of(mut l: Line<'_>, line_no: usize) -> Option<(Record, OpMark)> {
    if l.v != FORMAT_VERSION {
        return None;
    }
    // A credential's `token_id` is its body's; any other record's is who
    // wrote it (`Stamp::record` keeps it off a credential).
    let token_id = l.token_id.take();
    let body = match &*l.kind {
        "message" => Body::Message(Message {
            fleet_id: l.fleet_id?,
            from_agent_id: l.from_agent_id?,
            to_agent_id: l.to_agent_id?,
            correlation_id: l.correlation_id,
            payload: l.payload?,
        }),
        "receipt" => Body::Receipt(Box::new(Receipt {
            receipt: l.receipt?,
            discussion_id: l.discussion_id?,
            attempt_id: l.attempt_id,
            agent_id: l.agent_id,
            turn: l.turn,
            head_message_id: l.head_message_id,
            deadline_ms: l.deadline_ms,
            pid: l.pid,
            message_id: l.message_id,
            reason: l.reason,
            exit_code: l.exit_code,
            signal: l.signal,
            turns_used: l.turns_used,
            detail: l.detail,
            usage: l.usage,
            escalation_receipt_id: l.escalation_receipt_id,
            usage_unreadable: l.usage_unreadable,
            approval_id: l.approval_id,
            rule: l.rule,
            spend: l.spend,
            expires_ms: l.expires_ms,
            into: l.into,
            via: l.via,
        })),
        "fleet" => Body::Fleet(FleetChange {
            op: match l.op.as_deref()? {
                "add" => FleetOp::Add,
                "remove" => FleetOp::Remove,
                _ => return None,
            },
            fleet_id: l.fleet_id?,
            agent_id: l.agent_id?,
        }),
        "kill_switch" => Body::KillSwitch(KillSwitch {
            engaged: l.engaged?,
            reason: l.reason,
            scope: l.scope,
        }),
        "quota" => {
            let quota = QuotaSetting {
                agent_id: l.agent_id,
                wakes_per_hour: l.wakes_per_hour,
                tokens_per_hour: l.tokens_per_hour,
                cost_usd_per_day: l.cost_usd_per_day,
            };
            if !quota.sets_something() {
                return None;
            }
            Body::Quota(quota)
        }
        "credential" => Body::Credential(Credential {
            op: match l.op.as_deref()? {
                "issue" => CredentialOp::Issue,
                "revoke" => CredentialOp::Revoke,
                _ => return None,
            },
            token_id: token_id.clone()?,
            agent_id: l.agent_id,
            role: l.role,
            sha256: l.sha256,
            expires_ms: l.expires_ms,
        }),
        _ => return None,
    };
    let stamp = Stamp {
        id: l.id,
        at_ms: l.at_ms,
        by: l.by,
        op_lines: l.op_lines,
        op_id: l.op_id,
        idempotency_key: l.idempotency_key,
        request_digest: l.request_digest,
        token_id,
    };
    Some(stamp.record(body, line_no))
}
