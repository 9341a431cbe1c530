//! The one error type of `discuss`: every failure carries its contract code,
//! which fixes the exit status, plus a message, structured details and hints.

use serde_json::{Map, Value};
use std::fmt;

/// Contract error codes (`cli.md`, "Errors and exit statuses").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// A bug caught before it reached the ledger.
    Internal,
    IoError,
    LedgerUnreadable,
    /// A PostgreSQL ledger whose database cannot be reached (or was lost
    /// mid-operation: nothing of that operation was written).
    LedgerUnavailable,
    /// The ledger is on NFS, SMB or the like (an addition to the contract).
    NetworkFilesystem,
    Usage,
    InvalidArgument,
    InvalidId,
    OutOfRange,
    PayloadNotJson,
    PayloadTooLarge,
    SameAgent,
    GroupNotSupported,
    UnknownField,
    /// A tool call of `discuss mcp --agent A` (or of a `serve` agent
    /// token) for another agent.
    AgentMismatch,
    /// `serve`: a missing, unknown, revoked or expired token (never which).
    Unauthorized,
    /// `serve`: an agent token reading a discussion it takes no part in,
    /// or an agent token on an operator endpoint.
    Forbidden,
    /// `serve`: a path that names no endpoint (HTTP 404).
    NotFound,
    /// `serve`: a method the path does not take (HTTP 405).
    MethodNotAllowed,
    /// `serve`: a body that is not `application/json` (HTTP 415).
    UnsupportedMediaType,
    /// `token revoke` of an id no token has.
    UnknownToken,
    /// `serve`: a connection past `--max-connections` (HTTP 503).
    ServerBusy,
    /// A token holds as many event streams as one token may (HTTP 429).
    TooManyStreams,
    UnknownFleet,
    NotInFleet,
    UnknownDiscussion,
    UnknownAttempt,
    /// A discussion id prefix that more than one discussion starts with.
    AmbiguousId,
    StaleHead,
    TurnAlreadyActive,
    NotRecipient,
    NotAttemptAgent,
    AttemptNotLive,
    DiscussionTerminal,
    /// The same `--idempotency-key` with other arguments.
    IdempotencyConflict,
    WakeQuotaExceeded,
    /// An agent's reported spend in its window reached its cap
    /// (`quota set --tokens-per-hour`, `--cost-usd-per-day`).
    SpendQuotaExceeded,
    KillSwitchEngaged,
    /// A gate covers the wake: a person must grant it first (details
    /// carry `approval_id`).
    ApprovalRequired,
    /// A person denied the wake of that head, or its request expired.
    ApprovalDenied,
    /// `approve`/`deny` of a request that is decided, expired or moot.
    ApprovalNotPending,
    UnknownApproval,
    /// `wake --into`: the pane (or the tmux server) is not there.
    UnknownTarget,
    /// `turn`: no turn is reserved for the agent.
    NoLiveTurn,
    /// `wake --into`: the pane never quieted or vanished; the turn ended
    /// `failed` (exit 8, as a supervised turn that failed).
    DeliveryFailed,
    DiscussionInvalid,
    IntegrityFindings,
    /// `verify --seal`: the ledger no longer holds the sealed line as it
    /// was, or the seal's signature does not verify.
    SealMismatch,
    WaitTimeout,
    /// `wait`: the discussion is in a terminal status not among those
    /// asked for, and terminal statuses never change.
    StatusUnreachable,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        use ErrorCode::*;
        match self {
            Internal => "internal",
            IoError => "io_error",
            LedgerUnreadable => "ledger_unreadable",
            LedgerUnavailable => "ledger_unavailable",
            NetworkFilesystem => "network_filesystem",
            Usage => "usage",
            InvalidArgument => "invalid_argument",
            InvalidId => "invalid_id",
            OutOfRange => "out_of_range",
            PayloadNotJson => "payload_not_json",
            PayloadTooLarge => "payload_too_large",
            SameAgent => "same_agent",
            GroupNotSupported => "group_not_supported",
            UnknownField => "unknown_field",
            AgentMismatch => "agent_mismatch",
            Unauthorized => "unauthorized",
            Forbidden => "forbidden",
            NotFound => "not_found",
            MethodNotAllowed => "method_not_allowed",
            UnsupportedMediaType => "unsupported_media_type",
            UnknownToken => "unknown_token",
            ServerBusy => "server_busy",
            TooManyStreams => "too_many_streams",
            UnknownFleet => "unknown_fleet",
            NotInFleet => "not_in_fleet",
            UnknownDiscussion => "unknown_discussion",
            UnknownAttempt => "unknown_attempt",
            AmbiguousId => "ambiguous_id",
            StaleHead => "stale_head",
            TurnAlreadyActive => "turn_already_active",
            NotRecipient => "not_recipient",
            NotAttemptAgent => "not_attempt_agent",
            AttemptNotLive => "attempt_not_live",
            DiscussionTerminal => "discussion_terminal",
            IdempotencyConflict => "idempotency_conflict",
            WakeQuotaExceeded => "wake_quota_exceeded",
            SpendQuotaExceeded => "spend_quota_exceeded",
            KillSwitchEngaged => "kill_switch_engaged",
            ApprovalRequired => "approval_required",
            ApprovalDenied => "approval_denied",
            ApprovalNotPending => "approval_not_pending",
            UnknownApproval => "unknown_approval",
            UnknownTarget => "unknown_target",
            NoLiveTurn => "no_live_turn",
            DeliveryFailed => "delivery_failed",
            DiscussionInvalid => "discussion_invalid",
            IntegrityFindings => "integrity_findings",
            SealMismatch => "seal_mismatch",
            WaitTimeout => "wait_timeout",
            StatusUnreachable => "status_unreachable",
        }
    }

    /// The exit status of the contract's table; 8 and 9 (`EXIT_TURN_*`,
    /// below) are not errors but how a supervised turn ended.
    pub fn exit_status(self) -> u8 {
        use ErrorCode::*;
        match self {
            Internal | IoError | LedgerUnreadable | LedgerUnavailable | NetworkFilesystem
            | ServerBusy => 1,
            Usage => 2,
            InvalidArgument | InvalidId | OutOfRange | PayloadNotJson | PayloadTooLarge
            | SameAgent | GroupNotSupported | UnknownField | AgentMismatch | Unauthorized
            | Forbidden | MethodNotAllowed | UnsupportedMediaType => 3,
            UnknownFleet | NotInFleet | UnknownDiscussion | UnknownAttempt | AmbiguousId
            | NotFound | UnknownToken | UnknownApproval | UnknownTarget | NoLiveTurn => 4,
            StaleHead | TurnAlreadyActive | NotRecipient | NotAttemptAgent | AttemptNotLive
            | DiscussionTerminal | IdempotencyConflict | ApprovalNotPending => 5,
            WakeQuotaExceeded | SpendQuotaExceeded | KillSwitchEngaged | TooManyStreams
            | ApprovalRequired | ApprovalDenied => 6,
            DiscussionInvalid | IntegrityFindings | SealMismatch => 7,
            WaitTimeout | StatusUnreachable => 10,
            DeliveryFailed => EXIT_TURN_FAILED,
        }
    }
}

/// Exit 8: a supervised turn ended without a reply before its deadline
/// (the rest of the table is `ErrorCode::exit_status`; 0 is success).
pub const EXIT_TURN_FAILED: u8 = 8;
/// Exit 9: a supervised turn reached its deadline (`deadman`).
pub const EXIT_TURN_DEADMAN: u8 = 9;

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure of a command, as the user sees it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code}: {message}")]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
    /// Boxed to keep `Result<T, Error>` small.
    pub details: Box<Map<String, Value>>,
    pub hints: Vec<String>,
    /// The hints as a tool caller (`call`, MCP) reads them: fields of the
    /// request instead of command-line flags. Empty when `hints` speak of
    /// neither.
    pub tool_hints: Vec<String>,
    /// For usage errors: how the command is written (`discuss show <DSC>`).
    pub usage: Option<String>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            details: Box::default(),
            hints: Vec::new(),
            tool_hints: Vec::new(),
            usage: None,
        }
    }

    /// A usage error, with how the command is written.
    pub fn usage(message: impl Into<String>, usage: String) -> Self {
        let mut error = Error::new(ErrorCode::Usage, message).detail("usage", usage.clone());
        error.usage = Some(usage);
        error
    }

    pub fn detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        let hint = hint.into();
        if !self.tool_hints.is_empty() {
            self.tool_hints.push(hint.clone());
        }
        self.hints.push(hint);
        self
    }

    /// A hint in two phrasings: for the command line, and for a tool
    /// caller, who changes fields of a request rather than flags.
    pub fn hint_each(mut self, cli: impl Into<String>, tool: impl Into<String>) -> Self {
        if self.tool_hints.is_empty() {
            self.tool_hints = self.hints.clone();
        }
        self.hints.push(cli.into());
        self.tool_hints.push(tool.into());
        self
    }

    /// The error as a tool call answers it: the hints in the tool's terms.
    pub fn for_tools(mut self) -> Self {
        if !self.tool_hints.is_empty() {
            self.hints = std::mem::take(&mut self.tool_hints);
        }
        self
    }

    pub fn exit_status(&self) -> u8 {
        self.code.exit_status()
    }

    /// An I/O failure on `what` (a path or an action).
    pub fn io(what: impl fmt::Display, err: &std::io::Error) -> Self {
        Error::new(ErrorCode::IoError, format!("{what}: {err}")).detail(
            "os_error",
            err.raw_os_error().map(Value::from).unwrap_or(Value::Null),
        )
    }

    /// The `{"error":{...}}` object printed on stderr in JSON mode.
    pub fn to_json(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), self.code.as_str().into());
        error.insert("message".into(), self.message.clone().into());
        error.insert("details".into(), Value::Object((*self.details).clone()));
        if !self.hints.is_empty() {
            error.insert("hints".into(), self.hints.clone().into());
        }
        let mut root = Map::new();
        root.insert("error".into(), Value::Object(error));
        Value::Object(root)
    }

    /// `error[code]: message` followed by `hint:` lines.
    pub fn to_human(&self) -> String {
        // Messages carry text from the ledger (a kill-switch reason):
        // never raw escapes or line breaks on a terminal.
        let safe = |text: &str| crate::escape::printable(text, false).into_owned();
        let mut text = format!("error[{}]: {}\n", self.code, safe(&self.message));
        if let Some(usage) = &self.usage {
            text.push_str("usage: ");
            text.push_str(&safe(usage));
            text.push('\n');
        }
        for hint in &self.hints {
            text.push_str("hint: ");
            text.push_str(&safe(hint));
            text.push('\n');
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_statuses_follow_the_contract_table() {
        assert_eq!(ErrorCode::IoError.exit_status(), 1);
        assert_eq!(ErrorCode::PayloadTooLarge.exit_status(), 3);
        assert_eq!(ErrorCode::UnknownAttempt.exit_status(), 4);
        assert_eq!(ErrorCode::DiscussionTerminal.exit_status(), 5);
        assert_eq!(ErrorCode::IdempotencyConflict.exit_status(), 5);
        assert_eq!(ErrorCode::KillSwitchEngaged.exit_status(), 6);
        assert_eq!(ErrorCode::DiscussionInvalid.exit_status(), 7);
        assert_eq!(ErrorCode::WaitTimeout.exit_status(), 10);
        // The turn statuses sit between the errors' (none is 8 or 9).
        assert_eq!((EXIT_TURN_FAILED, EXIT_TURN_DEADMAN), (8, 9));
    }

    #[test]
    fn human_form_has_code_and_hints() {
        let err = Error::new(ErrorCode::StaleHead, "head moved").hint("run show");
        assert_eq!(
            err.to_human(),
            "error[stale_head]: head moved\nhint: run show\n"
        );
        assert_eq!(err.to_json()["error"]["code"], "stale_head");
    }
}
