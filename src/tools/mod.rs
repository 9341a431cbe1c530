//! The one table of the seed's tools (`ask_peer`, `wake_agent`,
//! `reply_discussion`, `get_discussion`, `list_discussions`, `inbox`):
//! each tool's name, description, fields (type, range, default, whether
//! required) and whether it only reads. Every protocol front-end is made
//! from it: `discuss call` and `discuss mcp` parse requests with it
//! (`request`), MCP's input and output schemas are written from it
//! (`schema`), and `answer` runs a parsed request through `operations`.

mod answer;
pub(crate) mod mcp;
pub(crate) mod push;
mod request;
pub(crate) mod schema;

pub(crate) use answer::{Caller, answer, as_stranger, hide_unless_taking_part, resolve_for};

use crate::discussion::envelope;

/// The most a request object may have: a payload string of a whole
/// envelope, escaped (at most six bytes a character), and the rest.
pub(crate) const MAX_REQUEST_BYTES: usize = 6 * envelope::MAX_ENVELOPE_BYTES + 65_536;

/// One tool as every front-end shows it.
pub(crate) struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    /// What the call does, and what it answers.
    pub operation: Operation,
    pub fields: &'static [Field],
}

impl Tool {
    /// Reads only: never appends to the ledger.
    pub(crate) fn read_only(&self) -> bool {
        matches!(
            self.operation,
            Operation::Get | Operation::List | Operation::Inbox
        )
    }

    pub(crate) fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    Ask,
    Wake,
    Reply,
    Get,
    List,
    Inbox,
    TakeTurn,
}

pub(crate) struct Field {
    pub name: &'static str,
    pub kind: Kind,
    pub need: Need,
    pub description: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    Required,
    Optional,
    /// Required, unless the server acts for one agent (`--agent`), which
    /// then stands in; the description that says so.
    UnlessPinned(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An agent or fleet id (`cli.md`, "IDs").
    Name,
    /// An agent id; a list of them is taken to be refused as a group
    /// (`group_not_supported`), as `ask --to a,b` is.
    Peer,
    /// An id the server wrote, with its prefix.
    ServerId(&'static str),
    /// A JSON body, serialized into a string.
    Payload,
    Integer {
        range: (i64, i64),
        default: i64,
    },
    Boolean {
        default: bool,
    },
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// A status, or a list of them (`terminal` for any terminal one).
    Statuses,
    /// A token budget: an integer from 1 to 1,000,000,000, or none.
    Tokens,
    /// A cost budget in dollars: a number above 0 and at most 1,000,000,
    /// with at most nine decimals, or none.
    Dollars,
    /// What a turn cost: `{"input_tokens","output_tokens","cost_usd"}`.
    Usage,
    IdempotencyKey,
}

/// The statuses a list takes: each status, and `terminal`.
pub(crate) const STATUSES: &[&str] = &[
    "invalid",
    "closed",
    "deadman",
    "expired",
    "exhausted",
    "active",
    "open",
    "terminal",
];

/// `max_turns`, `timeout_ms` and `turn_timeout_ms` when a caller gives none
/// (the same for `discuss ask`).
pub(crate) const DEFAULT_MAX_TURNS: i64 = 4;
pub(crate) const DEFAULT_TIMEOUT_MS: i64 = 300_000;
pub(crate) const DEFAULT_TURN_TIMEOUT_MS: i64 = 60_000;

const IDEMPOTENCY_KEY: Field = Field {
    name: "idempotency_key",
    kind: Kind::IdempotencyKey,
    need: Need::Optional,
    description: "Optional. Makes the call safe to retry: the same key with the same \
        arguments answers the original result (\"replayed\": true) and writes nothing; \
        with other arguments it is refused (idempotency_conflict).",
};

pub(crate) const TOOLS: &[Tool] = &[
    Tool {
        name: "ask_peer",
        description: "Start a discussion: send the root message (turn 1) to one peer agent of the \
             same fleet. Answers discussion_id, root_message_id (the head to wake on) and \
             the policy. Nothing starts the peer unless wake_peer is true, which also \
             reserves the peer's first turn (quota and kill-switch apply).",
        operation: Operation::Ask,
        fields: &[
            Field {
                name: "from_agent_id",
                kind: Kind::Name,
                need: Need::Required,
                description: "You, the asking agent (a member of the fleet).",
            },
            Field {
                name: "to_agent_id",
                kind: Kind::Peer,
                need: Need::Required,
                description: "The one peer agent (a member of the fleet, not you).",
            },
            Field {
                name: "fleet_id",
                kind: Kind::Name,
                need: Need::Required,
                description: "The fleet both agents belong to.",
            },
            Field {
                name: "payload",
                kind: Kind::Payload,
                need: Need::Required,
                description: "The message body as serialized JSON, e.g. \
                        \"{\\\"body\\\":\\\"Refactor auth module?\\\"}\". The whole envelope \
                        is at most 65,536 bytes.",
            },
            Field {
                name: "max_turns",
                kind: Kind::Integer {
                    range: envelope::MAX_TURNS,
                    default: DEFAULT_MAX_TURNS,
                },
                need: Need::Optional,
                description: "Turn budget, the root included.",
            },
            Field {
                name: "timeout_ms",
                kind: Kind::Integer {
                    range: envelope::TIMEOUT_MS,
                    default: DEFAULT_TIMEOUT_MS,
                },
                need: Need::Optional,
                description: "Conversation deadline after the root.",
            },
            Field {
                name: "turn_timeout_ms",
                kind: Kind::Integer {
                    range: envelope::TURN_TIMEOUT_MS,
                    default: DEFAULT_TURN_TIMEOUT_MS,
                },
                need: Need::Optional,
                description: "Deadline of each turn; at most timeout_ms.",
            },
            Field {
                name: "wake_peer",
                kind: Kind::Boolean { default: false },
                need: Need::Optional,
                description: "Reserve the peer's first turn in the same atomic write.",
            },
            Field {
                name: "max_tokens",
                kind: Kind::Tokens,
                need: Need::Optional,
                description: "Token budget (input + output tokens the turns report); the \
                        discussion is exhausted when its spend reaches it. None when absent.",
            },
            Field {
                name: "max_cost_usd",
                kind: Kind::Dollars,
                need: Need::Optional,
                description: "Cost budget in US dollars, e.g. 0.50; the discussion is \
                        exhausted when the cost its turns report reaches it. None when absent.",
            },
            IDEMPOTENCY_KEY,
        ],
    },
    Tool {
        name: "wake_agent",
        description: "Reserve one budgeted turn for the agent the current head is addressed to. It \
             only reserves: it never starts the agent. Answers the attempt (attempt_id, \
             turn, deadline_at) that the woken agent's reply must name. Refused with \
             stale_head if the head moved, turn_already_active if someone holds the turn.",
        operation: Operation::Wake,
        fields: &[
            Field {
                name: "agent_id",
                kind: Kind::Name,
                need: Need::Required,
                description: "The agent to wake: the recipient of the head.",
            },
            Field {
                name: "discussion_id",
                kind: Kind::ServerId(crate::ids::DISCUSSION),
                need: Need::Required,
                description: "The discussion, as the server named it.",
            },
            Field {
                name: "expected_head_message_id",
                kind: Kind::ServerId(crate::ids::MESSAGE),
                need: Need::Required,
                description: "The head message you saw (get_discussion's head.message_id).",
            },
            IDEMPOTENCY_KEY,
        ],
    },
    Tool {
        name: "reply_discussion",
        description: "Answer within the attempt you were woken for, before its deadline: a question \
             back to the other agent, or a result. close: true ends the discussion. Answers \
             the new message id and the discussion's status.",
        operation: Operation::Reply,
        fields: &[
            Field {
                name: "agent_id",
                kind: Kind::Name,
                need: Need::Required,
                description: "You, the woken agent.",
            },
            Field {
                name: "discussion_id",
                kind: Kind::ServerId(crate::ids::DISCUSSION),
                need: Need::Required,
                description: "The discussion.",
            },
            Field {
                name: "attempt_id",
                kind: Kind::ServerId(crate::ids::ATTEMPT),
                need: Need::Required,
                description: "The attempt wake_agent reserved for you.",
            },
            Field {
                name: "reply_to_message_id",
                kind: Kind::ServerId(crate::ids::MESSAGE),
                need: Need::Required,
                description: "The head message you answer.",
            },
            Field {
                name: "type",
                kind: Kind::OneOf(&["question", "result"]),
                need: Need::Required,
                description: "question: ask back; result: answer.",
            },
            Field {
                name: "payload",
                kind: Kind::Payload,
                need: Need::Required,
                description: "The body as serialized JSON, e.g. \
                        \"{\\\"body\\\":\\\"Yes, proceed.\\\"}\".",
            },
            Field {
                name: "close",
                kind: Kind::Boolean { default: false },
                need: Need::Optional,
                description: "End the discussion with this reply.",
            },
            Field {
                name: "usage",
                kind: Kind::Usage,
                need: Need::Optional,
                description: "What this turn cost, as your model reported it: \
                        {\"input_tokens\":1200,\"output_tokens\":300,\"cost_usd\":0.012}, each \
                        field optional and non-negative. Counts against the discussion's budgets.",
            },
            IDEMPOTENCY_KEY,
        ],
    },
    Tool {
        name: "get_discussion",
        description: "Read a discussion's derived state: status, participants, budget, head, \
             transcript, attempts, escalation and integrity findings. Never writes.",
        operation: Operation::Get,
        fields: &[
            Field {
                name: "discussion_id",
                kind: Kind::ServerId(crate::ids::DISCUSSION),
                need: Need::Required,
                description: "The discussion.",
            },
            Field {
                name: "include_receipts",
                kind: Kind::Boolean { default: true },
                need: Need::Optional,
                description: "Include each transcript entry's receipts.",
            },
        ],
    },
    Tool {
        name: "list_discussions",
        description: "List discussions, newest first, optionally by status, agent or fleet. Never \
             writes.",
        operation: Operation::List,
        fields: &[
            Field {
                name: "status",
                kind: Kind::Statuses,
                need: Need::Optional,
                description: "A status, or a list; terminal stands for any terminal one.",
            },
            Field {
                name: "agent_id",
                kind: Kind::Name,
                need: Need::Optional,
                description: "Only discussions of this agent.",
            },
            Field {
                name: "fleet_id",
                kind: Kind::Name,
                need: Need::Optional,
                description: "Only discussions of this fleet.",
            },
        ],
    },
    Tool {
        name: "inbox",
        description: "The discussions whose head is addressed to an agent: open ones (what it could \
             be woken for) and its live turn (active, with live_attempt_id and \
             live_attempt_deadline_at: reply_discussion with that attempt_id and \
             head_message_id before the deadline). Never writes, never wakes.",
        operation: Operation::Inbox,
        fields: &[Field {
            name: "agent_id",
            kind: Kind::Name,
            need: Need::UnlessPinned("The agent; this server's own agent when left out."),
            description: "The agent whose inbox to read.",
        }],
    },
    Tool {
        name: "take_turn",
        description: "For an agent in a live session: the turn reserved for it (discussion, \
             attempt, deadline, the head message with its body) and the reply command that \
             answers it; the first call records that the session picked the turn up. \
             wait_ms waits that long for a turn to be reserved (for a wake, never for a \
             message). Refused no_live_turn when none is.",
        operation: Operation::TakeTurn,
        fields: &[
            Field {
                name: "agent_id",
                kind: Kind::Name,
                need: Need::UnlessPinned("The agent; this server's own agent when left out."),
                description: "The agent whose turn to take.",
            },
            Field {
                name: "wait_ms",
                kind: Kind::Integer {
                    range: (0, 600_000),
                    default: 0,
                },
                need: Need::Optional,
                description: "Wait up to this many ms for a turn to be reserved.",
            },
        ],
    },
];

/// The tool of this name.
pub(crate) fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The tools' names, as a list for a message.
pub(crate) fn names() -> String {
    TOOLS.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_is_in_its_range() {
        for tool in TOOLS {
            for field in tool.fields {
                if let Kind::Integer { range, default } = field.kind {
                    assert!(
                        (range.0..=range.1).contains(&default),
                        "{}.{}",
                        tool.name,
                        field.name
                    );
                }
            }
        }
    }

    #[test]
    fn the_defaults_make_a_policy() {
        assert!(
            crate::discussion::Policy::new(
                DEFAULT_MAX_TURNS,
                DEFAULT_TIMEOUT_MS,
                DEFAULT_TURN_TIMEOUT_MS
            )
            .is_ok()
        );
    }

    #[test]
    fn names_are_unique_and_fields_too() {
        for (i, tool) in TOOLS.iter().enumerate() {
            assert!(TOOLS[..i].iter().all(|t| t.name != tool.name));
            for (j, field) in tool.fields.iter().enumerate() {
                assert!(tool.fields[..j].iter().all(|f| f.name != field.name));
            }
        }
    }
}
