//! Ledger format v1 (`ledger.md`): one JSON object per line.
//!
//! Parsing is lenient where the format allows other writers (unknown extra
//! fields are ignored) and strict where it must be (a line that is not a
//! record of a known `v` and `kind` with its required fields is reported as
//! unreadable and skipped).

use serde::Deserialize;
use serde_json::{Map, Value};

pub mod chain;
pub(crate) mod scan;
mod typed;
mod write;

pub const FORMAT_VERSION: u64 = 1;

/// One record of the ledger.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub id: String,
    pub at_ms: i64,
    pub by: String,
    pub body: Body,
    /// 1-based line number in the ledger; 0 for a record not yet written.
    pub line: usize,
    /// On the first record of a retry-safe operation: its key and request.
    pub idempotency: Option<Idempotency>,
    /// The operation this record belongs to, when it is a later line of an
    /// operation of several lines (its `op_id`).
    pub op_id: Option<String>,
    /// The token a `serve` caller was verified by (its `tok_` id, never the
    /// token): written beside `by`, which is the caller's word. Never on a
    /// credential, whose own `token_id` names the token it issues or
    /// revokes. An addition to ledger v1's fields.
    pub token_id: Option<String>,
}

/// `--idempotency-key`: the key, and a digest of the request it was given
/// with (a retry must ask for the same thing). Additions to ledger v1's
/// fields: `idempotency_key`, `request_digest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Idempotency {
    pub key: String,
    pub digest: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Message(Message),
    /// Boxed: a receipt has many fields, and every record, moved from the
    /// parse to the derivation a few times, is as large as its largest kind.
    Receipt(Box<Receipt>),
    Fleet(FleetChange),
    KillSwitch(KillSwitch),
    Quota(QuotaSetting),
    Credential(Credential),
    Gate(Gate),
    Import(ImportMark),
}

/// An approval gate of one scope (`ledger.md`, `gate`): the wakes it
/// covers wait for a person's yes. The scope's latest record is its rule;
/// `engaged: false` clears it. Conditions: any of them matches.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Gate {
    /// As a kill-switch's; absent: every wake.
    #[serde(default)]
    pub scope: Option<Scope>,
    pub engaged: bool,
    #[serde(default)]
    pub always: Option<bool>,
    /// The turn a wake would charge, from this one on.
    #[serde(default)]
    pub from_turn: Option<u32>,
    /// The discussion's recorded spend reaches it.
    #[serde(default)]
    pub over_cost_usd: Option<crate::spend::Usd>,
    #[serde(default)]
    pub over_tokens: Option<u64>,
    #[serde(default)]
    pub approval_timeout_ms: Option<i64>,
}

/// A `kind:"import"` line (an addition to ledger v1): the `lines` lines
/// after it were appended by `ledger import` and do not continue the
/// ledger's chain. Their first line, and those at `chain_restarts`
/// (0-based among them: where `--skip-existing` left lines out, or the
/// imported file's own chain restarts), follow no line here; every other
/// one still names the line before it. What each excused line names is
/// in `restart_prevs`, so a mark excuses those lines and no others: one
/// slipped in where no import was cannot excuse an edit it does not name
/// (and a seal covers every line, excused or not). Nothing else reads it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ImportMark {
    pub lines: u64,
    #[serde(default)]
    pub chain_restarts: Vec<u64>,
    /// The `prev` of each excused line, the first imported one's and
    /// then each later one's in `chain_restarts`, in order (hex; `None`
    /// for a line without one). A mark without it excuses nothing.
    #[serde(default)]
    pub restart_prevs: Option<Vec<Option<String>>>,
}

/// A P2P substrate message; discussion messages carry the envelope in `payload`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Message {
    pub fleet_id: String,
    pub from_agent_id: String,
    pub to_agent_id: String,
    #[serde(default)]
    pub correlation_id: Option<String>,
    pub payload: String,
}

/// A lifecycle receipt. Which fields a receipt needs depends on its name;
/// the derivation checks that, so a receipt with missing fields becomes a
/// `contradictory_receipts` finding of its discussion rather than vanishing.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct Receipt {
    pub receipt: String,
    pub discussion_id: String,
    #[serde(default)]
    pub attempt_id: Option<String>,
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub turn: Option<u32>,
    #[serde(default)]
    pub head_message_id: Option<String>,
    #[serde(default)]
    pub deadline_ms: Option<i64>,
    #[serde(default)]
    pub pid: Option<u32>,
    #[serde(default)]
    pub message_id: Option<String>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub signal: Option<i32>,
    #[serde(default)]
    pub turns_used: Option<u32>,
    /// Free text on failed and deadman receipts (e.g. the OS error of a
    /// spawn failure). An addition to ledger v1's fields.
    #[serde(default)]
    pub detail: Option<String>,
    /// What the turn reported it cost (`completed`, `failed`, `deadman`),
    /// as written: the derivation checks it (`spend::Usage::from_json`).
    /// Boxed: most receipts have none, and every record is as large as
    /// its largest kind.
    #[serde(default)]
    pub usage: Option<Box<Value>>,
    /// On delivery receipts: the `discussion.escalated` receipt they are
    /// about. (A claim's lease ends at its `deadline_ms`.)
    #[serde(default)]
    pub escalation_receipt_id: Option<String>,
    /// On an attempt's terminal receipt: the turn's usage report existed
    /// but could not be read (a spend budget fails closed on it).
    #[serde(default)]
    pub usage_unreadable: Option<bool>,
    /// On a reservation: the approval that let it through; on a grant or
    /// a denial: the request it decides.
    #[serde(default)]
    pub approval_id: Option<String>,
    /// On an approval request: the gate's rule and the discussion's spend
    /// when it was asked (`{"tokens","cost_usd"}`), as written.
    #[serde(default)]
    pub rule: Option<Box<Value>>,
    #[serde(default)]
    pub spend: Option<Box<Value>>,
    /// On an approval request: when it expires undecided.
    #[serde(default)]
    pub expires_ms: Option<i64>,
    /// On a reservation (and its delivery): the live session told of the
    /// turn, `"tmux:%N"`.
    #[serde(default)]
    pub into: Option<String>,
    /// On `started`: `"pickup"` when the live session's agent took the
    /// turn; absent when a supervisor spawned it.
    #[serde(default)]
    pub via: Option<String>,
}

/// The receipts the format names. A ledger may hold others (another
/// tool's): `Receipt::receipt` keeps the name as written, and
/// `Receipt::kind` is `None` for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiptKind {
    Reserved,
    Started,
    Completed,
    Failed,
    Deadman,
    Escalated,
    /// Delivery receipts of an escalation (`discuss escalations deliver`):
    /// they never change a discussion's status.
    EscalationClaimed,
    EscalationDelivered,
    EscalationDeliveryFailed,
    /// A gate's request for a person's yes, and its decisions: they never
    /// change a discussion's status.
    ApprovalRequested,
    ApprovalGranted,
    ApprovalDenied,
    /// A live session was told of its turn (`wake --into`): the pointer
    /// was typed. Never changes a status.
    Delivered,
}

impl ReceiptKind {
    const ALL: [ReceiptKind; 13] = [
        ReceiptKind::Reserved,
        ReceiptKind::Started,
        ReceiptKind::Completed,
        ReceiptKind::Failed,
        ReceiptKind::Deadman,
        ReceiptKind::Escalated,
        ReceiptKind::EscalationClaimed,
        ReceiptKind::EscalationDelivered,
        ReceiptKind::EscalationDeliveryFailed,
        ReceiptKind::ApprovalRequested,
        ReceiptKind::ApprovalGranted,
        ReceiptKind::ApprovalDenied,
        ReceiptKind::Delivered,
    ];

    /// The name in the ledger's `receipt` field.
    pub fn name(self) -> &'static str {
        match self {
            ReceiptKind::Reserved => "discussion.attempt.reserved",
            ReceiptKind::Started => "discussion.attempt.started",
            ReceiptKind::Completed => "discussion.attempt.completed",
            ReceiptKind::Failed => "discussion.attempt.failed",
            ReceiptKind::Deadman => "discussion.attempt.deadman",
            ReceiptKind::Escalated => "discussion.escalated",
            ReceiptKind::EscalationClaimed => "discussion.escalation.claimed",
            ReceiptKind::EscalationDelivered => "discussion.escalation.delivered",
            ReceiptKind::EscalationDeliveryFailed => "discussion.escalation.delivery_failed",
            ReceiptKind::ApprovalRequested => "discussion.approval.requested",
            ReceiptKind::ApprovalGranted => "discussion.approval.granted",
            ReceiptKind::ApprovalDenied => "discussion.approval.denied",
            ReceiptKind::Delivered => "discussion.attempt.delivered",
        }
    }

    pub fn of(name: &str) -> Option<ReceiptKind> {
        ReceiptKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
    }
}

impl Receipt {
    /// Which of the format's receipts this is; `None` for a name it does
    /// not know.
    pub fn kind(&self) -> Option<ReceiptKind> {
        ReceiptKind::of(&self.receipt)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FleetOp {
    Add,
    Remove,
}

impl FleetOp {
    pub fn as_str(self) -> &'static str {
        match self {
            FleetOp::Add => "add",
            FleetOp::Remove => "remove",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FleetChange {
    pub op: FleetOp,
    pub fleet_id: String,
    pub agent_id: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct KillSwitch {
    pub engaged: bool,
    #[serde(default)]
    pub reason: Option<String>,
    /// The switch's scope; absent: the global switch.
    #[serde(default)]
    pub scope: Option<Scope>,
}

/// What a scoped kill-switch covers: a fleet, an agent or a discussion,
/// written `{"fleet":F}`, `{"agent":A}` or `{"discussion":D}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Scope {
    Fleet(String),
    Agent(String),
    Discussion(String),
}

impl Scope {
    /// `fleet`, `agent` or `discussion`.
    pub fn kind(&self) -> &'static str {
        match self {
            Scope::Fleet(_) => "fleet",
            Scope::Agent(_) => "agent",
            Scope::Discussion(_) => "discussion",
        }
    }

    /// The fleet, agent or discussion id.
    pub fn id(&self) -> &str {
        match self {
            Scope::Fleet(id) | Scope::Agent(id) | Scope::Discussion(id) => id,
        }
    }

    /// As JSON: `{"fleet":F}` and the like.
    pub fn to_json(&self) -> Value {
        serde_json::json!({ self.kind(): self.id() })
    }
}

/// One quota of one agent (or of the default, without `agent_id`): the
/// fields a record has are the ones it sets, each latest record winning
/// per agent and field. Spend caps are additions to ledger v1's fields.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct QuotaSetting {
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub wakes_per_hour: Option<u32>,
    /// Tokens (input + output) the agent's turns may report in any
    /// rolling hour.
    #[serde(default)]
    pub tokens_per_hour: Option<u64>,
    /// Dollars the agent's turns may report in any rolling 24 hours.
    #[serde(default)]
    pub cost_usd_per_day: Option<crate::spend::Usd>,
}

pub const MAX_WAKES_PER_HOUR: u32 = 100_000;

/// A `serve` token issued or revoked (`ledger.md`, `credential`): only
/// the token's SHA-256 digest is ever written, never the token.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Credential {
    pub op: CredentialOp,
    pub token_id: String,
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub role: Option<Role>,
    #[serde(default)]
    pub sha256: Option<String>,
    #[serde(default)]
    pub expires_ms: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CredentialOp {
    Issue,
    Revoke,
}

/// What a token acts as: one agent, or the operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Agent,
    Operator,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Agent => "agent",
            Role::Operator => "operator",
        }
    }
}

#[derive(Deserialize)]
struct Header {
    v: u64,
    kind: String,
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
    #[serde(default)]
    token_id: Option<String>,
}

/// What a line says of itself beside its kind and body, however it was
/// parsed: with the body, it makes the record.
struct Stamp {
    id: String,
    at_ms: i64,
    by: String,
    op_lines: Option<u64>,
    op_id: Option<String>,
    idempotency_key: Option<String>,
    request_digest: Option<String>,
    token_id: Option<String>,
}

impl Stamp {
    /// The record on line `line_no` with `body`, and its operation mark.
    fn record(self, body: Body, line_no: usize) -> (Record, OpMark) {
        let mark = OpMark::of(&self.id, self.op_lines, self.op_id.as_deref());
        let idempotency = match (self.idempotency_key, self.request_digest) {
            (Some(key), Some(digest)) => Some(Idempotency { key, digest }),
            _ => None,
        };
        let op_id = match &mark {
            OpMark::Member { op_id } => Some(op_id.clone()),
            _ => None,
        };
        // A credential's `token_id` is the token it is about.
        let token_id = match body {
            Body::Credential(_) => None,
            _ => self.token_id,
        };
        let record = Record {
            id: self.id,
            at_ms: self.at_ms,
            by: self.by,
            body,
            line: line_no,
            idempotency,
            op_id,
            token_id,
        };
        (record, mark)
    }
}

impl QuotaSetting {
    /// A quota record sets one quota at least.
    fn sets_something(&self) -> bool {
        self.wakes_per_hour.is_some()
            || self.tokens_per_hour.is_some()
            || self.cost_usd_per_day.is_some()
    }
}

/// The field on the first line of an operation that wrote several lines,
/// giving their number. An addition to ledger v1's fields.
pub const OP_LINES: &str = "op_lines";
/// The field on every line of an operation that wrote several lines: the
/// id of its first record. Each line claims its own membership, so a line
/// is never held back because of what another line says. An addition to
/// ledger v1's fields.
pub const OP_ID: &str = "op_id";

/// What a line says of the operation it belongs to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum OpMark {
    /// An operation of one line, or a line that claims nothing.
    #[default]
    Alone,
    /// The first line of an operation of `lines` lines (2 or more); its
    /// `op_id` is its own id.
    Opens { op_id: String, lines: u64 },
    /// A later line of the operation whose first record is `op_id`.
    Member { op_id: String },
    /// A line with `op_lines` but no `op_id`, as ledgers written before
    /// `op_id` existed have them: its later lines do not say they belong,
    /// so nothing is held back; it only counts whether that many follow.
    Announces { lines: u64 },
}

impl OpMark {
    /// The mark of a line with record id `id` and these two fields. A line
    /// whose fields contradict each other claims nothing.
    pub fn of(id: &str, op_lines: Option<u64>, op_id: Option<&str>) -> OpMark {
        match (op_lines, op_id) {
            (Some(lines), Some(op_id)) if lines > 1 && op_id == id => OpMark::Opens {
                op_id: op_id.to_owned(),
                lines,
            },
            (None, Some(op_id)) if op_id != id => OpMark::Member {
                op_id: op_id.to_owned(),
            },
            (Some(lines), None) if lines > 1 => OpMark::Announces { lines },
            _ => OpMark::Alone,
        }
    }
}

impl Record {
    /// The discussion a record belongs to, if any.
    pub fn discussion_id(&self) -> Option<&str> {
        match &self.body {
            Body::Message(m) => m.correlation_id.as_deref(),
            Body::Receipt(r) => Some(&r.discussion_id),
            _ => None,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self.body {
            Body::Message(_) => "message",
            Body::Receipt(_) => "receipt",
            Body::Fleet(_) => "fleet",
            Body::KillSwitch(_) => "kill_switch",
            Body::Quota(_) => "quota",
            Body::Credential(_) => "credential",
            Body::Gate(_) => "gate",
            Body::Import(_) => "import",
        }
    }

    /// Parses one line (without its `\n`). The error explains why the line
    /// is not a record.
    pub fn parse(line: &[u8], line_no: usize) -> Result<Record, String> {
        Record::parse_with_mark(line, line_no).map(|(record, _)| record)
    }

    /// Parses one line and what it says of its operation.
    ///
    /// In one typed pass over the bytes when it can; a line that pass does
    /// not take (a bad line, a duplicate key, deep nesting) is parsed again
    /// through a `Value`, which decides and explains. The typed pass only
    /// takes what that one takes, as the same record (`tests`, the fuzz
    /// target).
    pub fn parse_with_mark(line: &[u8], line_no: usize) -> Result<(Record, OpMark), String> {
        match typed::parse(line, line_no) {
            Some(parsed) => Ok(parsed),
            None => Record::parse_through_value(line, line_no),
        }
    }

    /// The typed pass alone: `None` where it leaves a line to the `Value`
    /// pass. For the fuzz target, which checks that the two agree.
    pub fn parse_typed(line: &[u8], line_no: usize) -> Option<(Record, OpMark)> {
        typed::parse(line, line_no)
    }

    /// Whether the typed pass's scanner, where it reads a line, reads what
    /// serde reads. For the fuzz target.
    pub fn typed_scan_as_serde(line: &[u8]) -> bool {
        typed::flat_as_serde(line)
    }

    /// `parse_with_mark` through a `serde_json::Value`: the reference the
    /// typed pass agrees with, and the one that explains a bad line.
    pub fn parse_through_value(line: &[u8], line_no: usize) -> Result<(Record, OpMark), String> {
        let value: Value = serde_json::from_slice(line).map_err(|e| format!("not JSON: {e}"))?;
        if !value.is_object() {
            return Err("not a JSON object".into());
        }
        let header = Header::deserialize(&value).map_err(|e| format!("bad record header: {e}"))?;
        if header.v != FORMAT_VERSION {
            return Err(format!("unknown format version v={}", header.v));
        }
        let body = match header.kind.as_str() {
            "message" => Message::deserialize(&value).map(Body::Message),
            "receipt" => Receipt::deserialize(&value).map(|r| Body::Receipt(Box::new(r))),
            "fleet" => FleetChange::deserialize(&value).map(Body::Fleet),
            "kill_switch" => KillSwitch::deserialize(&value).map(Body::KillSwitch),
            "quota" => QuotaSetting::deserialize(&value).and_then(|quota| {
                if quota.sets_something() {
                    Ok(Body::Quota(quota))
                } else {
                    Err(serde::de::Error::custom(
                        "a quota sets wakes_per_hour, tokens_per_hour or cost_usd_per_day",
                    ))
                }
            }),
            "credential" => Credential::deserialize(&value).map(Body::Credential),
            "gate" => Gate::deserialize(&value).map(Body::Gate),
            "import" => ImportMark::deserialize(&value).map(Body::Import),
            other => return Err(format!("unknown kind {other:?}")),
        }
        .map_err(|e| format!("bad {} record: {e}", header.kind))?;
        let stamp = Stamp {
            id: header.id,
            at_ms: header.at_ms,
            by: header.by,
            op_lines: header.op_lines,
            op_id: header.op_id,
            idempotency_key: header.idempotency_key,
            request_digest: header.request_digest,
            token_id: header.token_id,
        };
        Ok(stamp.record(body, line_no))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt() -> Record {
        Record {
            id: "rcp_1".into(),
            at_ms: 5,
            by: "op".into(),
            body: Body::Receipt(Box::new(Receipt {
                receipt: ReceiptKind::Reserved.name().into(),
                discussion_id: "dsc_1".into(),
                attempt_id: Some("att_1".into()),
                turn: Some(2),
                ..Receipt::default()
            })),
            line: 0,
            idempotency: None,
            op_id: None,
            token_id: None,
        }
    }

    #[test]
    fn round_trips_through_a_line() {
        let record = receipt();
        let line = record.to_line();
        assert!(line.starts_with(r#"{"v":1,"kind":"receipt","id":"rcp_1","at_ms":5"#));
        let parsed = Record::parse(line.trim_end().as_bytes(), 3).unwrap();
        assert_eq!(parsed, Record { line: 3, ..record });
    }

    #[test]
    fn rejects_what_is_not_a_record() {
        assert!(
            Record::parse(b"garbage", 1)
                .unwrap_err()
                .contains("not JSON")
        );
        assert!(
            Record::parse(b"[1]", 1)
                .unwrap_err()
                .contains("not a JSON object")
        );
        let v2 = br#"{"v":2,"kind":"fleet","id":"rec_1","at_ms":1,"by":"x","op":"add","fleet_id":"f","agent_id":"a"}"#;
        assert!(Record::parse(v2, 1).unwrap_err().contains("version"));
        let odd = br#"{"v":1,"kind":"weather","id":"rec_1","at_ms":1,"by":"x"}"#;
        assert!(Record::parse(odd, 1).unwrap_err().contains("unknown kind"));
        let missing = br#"{"v":1,"kind":"fleet","id":"rec_1","at_ms":1,"by":"x","op":"add"}"#;
        assert!(Record::parse(missing, 1).is_err());
    }

    /// The typed pass takes a line only as the `Value` pass reads it, and
    /// leaves it to that pass whenever it could disagree.
    #[test]
    fn the_typed_pass_agrees_with_the_value_pass_or_stands_aside() {
        let head = r#""v":1,"id":"rec_1","at_ms":1,"by":"x""#;
        let fleet =
            format!(r#"{{{head},"kind":"fleet","op":"add","fleet_id":"f","agent_id":"a"}}"#);
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let taken = [
            fleet.clone(),
            // Escapes in keys and values, fields of other kinds ignored.
            format!(
                r#"{{{head},"\u006bind":"kill_switch","engaged":true,"reason":"a\"b\u00e9","turn":3}}"#
            ),
            format!(
                r#"{{{head},"kind":"receipt","receipt":"r","discussion_id":"d","usage":{{"input_tokens":1}},"extra":[1,{{"a":null}}]}}"#
            ),
            format!(r#"{{{head},"kind":"quota","cost_usd_per_day":0.1,"agent_id":null}}"#),
            format!(
                r#" {{{head},"kind":"message","fleet_id":"f","from_agent_id":"a","to_agent_id":"b","payload":"{{}}","op_lines":2,"op_id":"rec_1"}} "#
            ),
        ];
        for line in &taken {
            let typed = Record::parse_typed(line.as_bytes(), 4);
            assert!(typed.is_some(), "{line}");
            assert_eq!(
                typed.map(Ok),
                Some(Record::parse_through_value(line.as_bytes(), 4)),
                "{line}"
            );
        }
        let left_to_the_value_pass = [
            // The last of a repeated key wins there; the typed pass stops.
            format!(
                r#"{{{head},"kind":"fleet","op":"add","fleet_id":"f","agent_id":"a","agent_id":"b"}}"#
            ),
            // An array is no record, though serde reads a struct from one.
            r#"[1,"fleet","rec_1",1,"x"]"#.to_owned(),
            // Nesting past the recursion limit in a field nobody reads.
            format!(
                r#"{{{head},"kind":"fleet","op":"add","fleet_id":"f","agent_id":"a","x":{deep}}}"#
            ),
            // A field of another kind with a type its own kind refuses.
            format!(
                r#"{{{head},"kind":"fleet","op":"add","fleet_id":"f","agent_id":"a","turn":"3"}}"#
            ),
            format!(r#"{{{head},"kind":"fleet","op":"issue","fleet_id":"f","agent_id":"a"}}"#),
            format!(r#"{{{head},"kind":"quota","agent_id":"a"}}"#),
            format!(r#"{{{head},"kind":"fleet","op":"add","fleet_id":null,"agent_id":"a"}}"#),
        ];
        for line in &left_to_the_value_pass {
            assert_eq!(Record::parse_typed(line.as_bytes(), 4), None, "{line}");
            assert_eq!(
                Record::parse_with_mark(line.as_bytes(), 4),
                Record::parse_through_value(line.as_bytes(), 4),
                "{line}"
            );
        }
        let duplicate = &left_to_the_value_pass[0];
        let Ok((record, _)) = Record::parse_with_mark(duplicate.as_bytes(), 4) else {
            panic!("a repeated key is read, the last one winning");
        };
        assert!(
            matches!(record.body, Body::Fleet(FleetChange { ref agent_id, .. }) if agent_id == "b")
        );
        assert!(
            Record::parse_with_mark(left_to_the_value_pass[2].as_bytes(), 4)
                .unwrap_err()
                .contains("recursion")
        );
    }

    #[test]
    fn ignores_extra_fields_of_other_writers() {
        let line = br#"{"v":1,"kind":"kill_switch","id":"rec_1","at_ms":1,"by":"x","engaged":true,"reason":null,"extra":7}"#;
        let record = Record::parse(line, 1).unwrap();
        assert_eq!(
            record.body,
            Body::KillSwitch(KillSwitch {
                engaged: true,
                reason: None,
                scope: None,
            })
        );
    }
}
