//! `show` (and `wait`): a discussion as the contract's object, as blocks
//! for a person, and as Markdown.

use super::delivery::DeliveryJson;
use super::text::{body_text, clock_time, duration, hanging, printable, relative, wrap};
use super::{At, Sink, Style, View};
use crate::clock::format_ms;
use crate::discussion::{Attempt, Discussion, Entry, Escalation, Finding, Root};
use crate::ledger::{Body, Record};
use crate::spend::Usd;
use serde::Serialize;
use serde_json::{Map, Value};

/// A discussion as `show` shows it, derived at `now_ms`.
pub(crate) struct DiscussionView {
    pub discussion: Discussion,
    pub now_ms: i64,
    /// With each transcript entry's receipts (`show` without
    /// `--no-receipts`).
    pub receipts: bool,
    /// The first engaged kill-switch that covers it.
    pub halted: Option<crate::global::Halt>,
}

/// `wait`: the discussion reached a status it was waited for.
pub(crate) struct Reached(pub DiscussionView);

#[derive(Serialize)]
struct DiscussionJson<'a> {
    discussion_id: &'a str,
    fleet_id: Option<&'a str>,
    participants: Vec<&'a str>,
    policy: Option<PolicyJson>,
    status: &'static str,
    terminal_at: Option<At>,
    created_at: Option<At>,
    updated_at: At,
    turns_used: u32,
    turns_remaining: u32,
    spend: Value,
    head: Option<HeadJson<'a>>,
    transcript: Vec<EntryJson<'a>>,
    attempts: Vec<AttemptJson<'a>>,
    escalation: Option<EscalationJson<'a>>,
    integrity_findings: Vec<FindingJson<'a>>,
    halted: Option<Value>,
    /// The approval request of the current head, if a gate asked one.
    approval: Option<Value>,
}

/// A discussion's policy, with its conversation deadline.
#[derive(Serialize)]
pub(super) struct PolicyJson {
    max_turns: u32,
    timeout_ms: i64,
    turn_timeout_ms: i64,
    conversation_deadline_at: At,
    max_tokens: Option<u64>,
    max_cost_usd: Option<Value>,
}

impl PolicyJson {
    pub(super) fn of(root: &Root) -> PolicyJson {
        PolicyJson {
            max_turns: root.policy.max_turns,
            timeout_ms: root.policy.timeout_ms,
            turn_timeout_ms: root.policy.turn_timeout_ms,
            conversation_deadline_at: At(root.deadline_ms),
            max_tokens: root.policy.max_tokens,
            max_cost_usd: root.policy.max_cost_usd.map(Usd::to_json),
        }
    }
}

#[derive(Serialize)]
struct HeadJson<'a> {
    message_id: &'a str,
    turn: u32,
    from_agent_id: &'a str,
    to_agent_id: &'a str,
}

#[derive(Serialize)]
struct EntryJson<'a> {
    turn: u32,
    message_id: &'a str,
    from_agent_id: &'a str,
    to_agent_id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    reply_to_message_id: Option<&'a str>,
    attempt_id: Option<&'a str>,
    close: bool,
    payload: &'a Value,
    at: At,
    by: &'a str,
    /// The token the writer was verified by through `serve`.
    token_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    receipts: Option<Vec<Value>>,
}

/// An attempt (a reserved turn) as the contract shows it.
#[derive(Serialize)]
pub(crate) struct AttemptJson<'a> {
    pub attempt_id: &'a str,
    pub agent_id: &'a str,
    pub turn: u32,
    pub head_message_id: &'a str,
    pub state: &'static str,
    pub reserved_at: At,
    pub deadline_at: At,
    pub started_at: Option<At>,
    pub ended_at: Option<At>,
    pub reply_message_id: Option<&'a str>,
    pub reason: Option<&'a str>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub pid: Option<u32>,
    pub detail: Option<&'a str>,
    pub usage: Option<Value>,
    /// Its usage report was there but could not be read.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub usage_unreadable: bool,
    /// The live session told of the turn (`wake --into`), when its
    /// pointer was typed, and when the session picked the turn up.
    pub into: Option<&'a str>,
    pub delivered_at: Option<At>,
    pub picked_up_at: Option<At>,
}

impl<'a> AttemptJson<'a> {
    pub(crate) fn of(attempt: &'a Attempt) -> AttemptJson<'a> {
        AttemptJson {
            attempt_id: &attempt.attempt_id,
            agent_id: &attempt.agent_id,
            turn: attempt.turn,
            head_message_id: &attempt.head_message_id,
            state: attempt.state.as_str(),
            reserved_at: At(attempt.reserved_at_ms),
            deadline_at: At(attempt.deadline_ms),
            started_at: attempt.started_at_ms.map(At),
            ended_at: attempt.ended_at_ms.map(At),
            reply_message_id: attempt.reply_message_id.as_deref(),
            reason: attempt.reason.as_deref(),
            exit_code: attempt.exit_code,
            signal: attempt.signal,
            pid: attempt.pid,
            detail: attempt.detail.as_deref(),
            usage: attempt.usage.map(|u| u.to_json()),
            usage_unreadable: attempt.usage_unreadable,
            into: attempt.into.as_deref(),
            delivered_at: attempt.delivered_at_ms.map(At),
            picked_up_at: attempt.picked_up_at_ms.map(At),
        }
    }
}

#[derive(Serialize)]
pub(crate) struct EscalationJson<'a> {
    receipt_id: &'a str,
    at: At,
    turns_used: u32,
    reason: &'a str,
    delivery: DeliveryJson<'a>,
}

impl<'a> EscalationJson<'a> {
    pub(crate) fn of(e: &'a Escalation, now_ms: i64) -> EscalationJson<'a> {
        EscalationJson {
            receipt_id: &e.receipt_id,
            at: At(e.at_ms),
            turns_used: e.turns_used,
            reason: &e.reason,
            delivery: DeliveryJson::of(&e.delivery, now_ms),
        }
    }
}

/// An integrity finding of a discussion (`show`, `verify`).
#[derive(Serialize)]
pub(super) struct FindingJson<'a> {
    kind: &'static str,
    message_id: Option<&'a str>,
    line: usize,
    detail: &'a str,
    record_id: &'a str,
}

impl<'a> FindingJson<'a> {
    pub(super) fn of(finding: &'a Finding) -> FindingJson<'a> {
        FindingJson {
            kind: finding.kind.as_str(),
            message_id: finding.message_id.as_deref(),
            line: finding.line,
            detail: &finding.detail,
            record_id: &finding.record_id,
        }
    }
}

impl Serialize for DiscussionView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let d = &self.discussion;
        let root = d.root.as_ref();
        DiscussionJson {
            discussion_id: &d.id,
            fleet_id: root.map(|r| r.fleet_id.as_str()),
            participants: root.map_or_else(Vec::new, |r| vec![r.asker.as_str(), r.peer.as_str()]),
            policy: root.map(PolicyJson::of),
            status: d.status.as_str(),
            terminal_at: d
                .terminal
                .filter(|_| d.status.is_terminal())
                .map(|(_, at)| At(at)),
            created_at: root.map(|r| At(r.created_at_ms)),
            updated_at: At(d.updated_at_ms),
            turns_used: d.turns_used,
            turns_remaining: d.turns_remaining(),
            spend: d.spend.to_json(),
            head: d.head().map(|head| HeadJson {
                message_id: &head.message_id,
                turn: head.turn,
                from_agent_id: &head.from_agent_id,
                to_agent_id: &head.to_agent_id,
            }),
            transcript: d
                .transcript
                .iter()
                .map(|entry| entry_json(d, entry, self.receipts))
                .collect(),
            attempts: d.attempts.iter().map(AttemptJson::of).collect(),
            escalation: d
                .escalation
                .as_ref()
                .map(|e| EscalationJson::of(e, self.now_ms)),
            integrity_findings: d.findings.iter().map(FindingJson::of).collect(),
            halted: self.halted.as_ref().map(crate::global::Halt::to_json),
            approval: d
                .approval()
                .map(|a| super::approvals::approval_json(a, self.now_ms)),
        }
        .serialize(serializer)
    }
}

impl Serialize for Reached {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

fn entry_json<'a>(discussion: &'a Discussion, entry: &'a Entry, receipts: bool) -> EntryJson<'a> {
    EntryJson {
        turn: entry.turn,
        message_id: &entry.message_id,
        from_agent_id: &entry.from_agent_id,
        to_agent_id: &entry.to_agent_id,
        kind: entry.kind.as_str(),
        reply_to_message_id: entry.reply_to_message_id.as_deref(),
        attempt_id: entry.attempt_id.as_deref(),
        close: entry.close,
        payload: &entry.body,
        at: At(entry.at_ms),
        by: &entry.by,
        token_id: entry.token_id.as_deref(),
        receipts: receipts.then(|| {
            receipts_of(discussion, &entry.message_id)
                .map(receipt_json)
                .collect()
        }),
    }
}

/// A receipt as `show` lists it: its ledger fields, with times as `*_at`.
/// Open-ended (a receipt carries what its kind needs), so a JSON object.
fn receipt_json(record: &Record) -> Value {
    let Body::Receipt(receipt) = &record.body else {
        return Value::Null;
    };
    let mut map = Map::new();
    map.insert("receipt_id".into(), record.id.clone().into());
    map.insert("receipt".into(), receipt.receipt.clone().into());
    map.insert("at".into(), format_ms(record.at_ms).into());
    map.insert("by".into(), record.by.clone().into());
    map.insert("token_id".into(), record.token_id.clone().into());
    if let Value::Object(fields) = record.to_json() {
        for (key, value) in fields {
            match key.as_str() {
                "v" | "kind" | "id" | "at_ms" | "by" | "token_id" | "receipt" | "discussion_id" => {
                }
                "deadline_ms" => {
                    let at = value.as_i64().map(format_ms);
                    map.insert("deadline_at".into(), at.map_or(Value::Null, Value::from));
                }
                _ => {
                    map.insert(key, value);
                }
            }
        }
    }
    Value::Object(map)
}

/// The receipts tied to a message: those of the attempts that answered it
/// and the `completed` receipt that produced it.
fn receipts_of<'a>(
    discussion: &'a Discussion,
    message_id: &'a str,
) -> impl Iterator<Item = &'a Record> {
    discussion.receipts.iter().filter(move |record| {
        let Body::Receipt(receipt) = &record.body else {
            return false;
        };
        let answered = receipt
            .attempt_id
            .as_deref()
            .and_then(|id| discussion.attempt(id))
            .is_some_and(|a| a.head_message_id == message_id);
        answered || receipt.message_id.as_deref() == Some(message_id)
    })
}

impl View for DiscussionView {
    /// A header, then one block a message, the attempts and the findings.
    fn human(&self, style: &Style, out: &mut Sink) {
        let mut text = human(&self.discussion, self.now_ms, style);
        // A halt is plain, right under the status line.
        if let Some(halt) = &self.halted
            && !self.discussion.status.is_terminal()
        {
            let scope = match &halt.scope {
                None => "the global kill-switch".to_owned(),
                Some(scope) => format!("the kill-switch of {} {}", scope.kind(), scope.id()),
            };
            let line = format!(
                "halted        HALTED by {scope}: {} (since {} by {})\n",
                printable(halt.state.reason.as_deref().unwrap_or(""), false),
                halt.state.changed_at_ms.map(format_ms).unwrap_or_default(),
                printable(halt.state.changed_by.as_deref().unwrap_or(""), false)
            );
            let at = text.find('\n').map_or(text.len(), |i| i + 1);
            text.insert_str(at, &labelled(&line, style.width.unwrap_or(usize::MAX)));
        }
        out.text(&text);
    }

    fn markdown(&self, out: &mut Sink) {
        out.text(&markdown(&self.discussion));
    }

    fn ids(&self) -> Vec<&str> {
        vec![&self.discussion.id]
    }
}

impl View for Reached {
    fn human(&self, style: &Style, out: &mut Sink) {
        let d = &self.0.discussion;
        out.text(&format!("{} is {}\n", d.id, style.status(d.status)));
    }
}

/// A header line, `label` padded to 14 columns and its value, wrapped at
/// word boundaries to `width` with the value's lines under each other.
fn labelled(line: &str, width: usize) -> String {
    const LABEL: usize = 14;
    let split = line
        .char_indices()
        .nth(LABEL)
        .map_or(line.len(), |(at, _)| at);
    let (label, value) = line.split_at(split);
    hanging(label, value, LABEL, Some(width))
}

/// One discussion for a person, top to bottom as the screen shows it: the
/// header lines, the transcript, the attempts, the findings. Long on
/// purpose: split, the order of the page would be harder to follow.
fn human(discussion: &Discussion, now_ms: i64, style: &Style) -> String {
    let mut text = String::new();
    let status = style.status(discussion.status);
    let Some(root) = &discussion.root else {
        text.push_str(&format!(
            "{}  {status}  (no usable root message)\n",
            discussion.id
        ));
        text.push_str(&findings_blocks(discussion, style));
        return text;
    };
    text.push_str(&format!(
        "{}  {status}\nparticipants  {} (asker) ⇄ {} (peer) in fleet {}\n",
        discussion.id, root.asker, root.peer, root.fleet_id
    ));
    // A finished discussion has no turns left to spend, no deadline to
    // count down to and nobody next: say only what was.
    let over = discussion.status.is_terminal();
    if over {
        text.push_str(&format!(
            "budget        {} of {} turns used; {} per turn\n",
            discussion.turns_used,
            root.policy.max_turns,
            duration(root.policy.turn_timeout_ms)
        ));
    } else {
        text.push_str(&format!(
            "budget        {} of {} turns used, {} remaining; {} per turn\n",
            discussion.turns_used,
            root.policy.max_turns,
            discussion.turns_remaining(),
            duration(root.policy.turn_timeout_ms)
        ));
    }
    if let Some(spend) = spend_text(discussion) {
        text.push_str(&format!("spend         {spend}\n"));
    }
    text.push_str(&format!(
        "created       {} ({})\n",
        format_ms(root.created_at_ms),
        relative(root.created_at_ms, now_ms)
    ));
    if over {
        text.push_str(&format!("deadline      {}\n", format_ms(root.deadline_ms)));
    } else {
        text.push_str(&format!(
            "deadline      {} ({})\n",
            format_ms(root.deadline_ms),
            relative(root.deadline_ms, now_ms)
        ));
    }
    if let Some(head) = discussion.head() {
        if over {
            text.push_str(&format!(
                "last message  {} (turn {}) from {}\n",
                head.message_id, head.turn, head.from_agent_id
            ));
        } else {
            text.push_str(&format!(
                "head          {} (turn {}) → {}\n",
                head.message_id, head.turn, head.to_agent_id
            ));
        }
    }
    if let Some(live) = discussion.live_attempt() {
        text.push_str(&format!(
            "live          {} holds turn {} until {} ({})\n",
            live.agent_id,
            live.turn,
            format_ms(live.deadline_ms),
            relative(live.deadline_ms, now_ms)
        ));
    }
    if let Some(approval) = discussion.approval() {
        text.push_str(&format!(
            "approval      {}\n",
            super::approvals::approval_line(approval, now_ms)
        ));
    }
    if let Some(escalation) = &discussion.escalation {
        text.push_str(&format!(
            "escalated     {} at {} after {} ({}); {}\n",
            escalation.receipt_id,
            format_ms(escalation.at_ms),
            super::text::count(u64::from(escalation.turns_used), "turn", "turns"),
            escalation_reason_text(&escalation.reason),
            escalation.delivery.state(now_ms).as_str()
        ));
    }
    // On a terminal, a header line wider than it is wrapped here, under
    // its value, not cut by the terminal; the first line (the id and the
    // status) is never wider than an id and a word.
    if let Some(width) = style.width {
        text = text
            .lines()
            .enumerate()
            .map(|(i, line)| match i {
                0 => format!("{line}\n"),
                _ => labelled(line, width),
            })
            .collect();
    }
    // One block a message, not a table: a body keeps its words and lines
    // whole (wrapped at word boundaries only on a terminal, never in a
    // pipe or a file), and ids are never split.
    text.push_str("\nTranscript\n");
    for entry in &discussion.transcript {
        let kind = if entry.close {
            format!("{} (close)", entry.kind.as_str())
        } else {
            entry.kind.as_str().to_owned()
        };
        // Who recorded it, when a token vouches for more than its word.
        let verified = entry
            .token_id
            .as_deref()
            .map(|token| format!(" · by {} (token {token})", printable(&entry.by, false)))
            .unwrap_or_default();
        text.push_str(&format!(
            "\nturn {} · {} → {} · {} · {}\n  {}{verified}\n",
            entry.turn,
            entry.from_agent_id,
            entry.to_agent_id,
            kind,
            clock_time(entry.at_ms),
            entry.message_id
        ));
        for line in body_text(&entry.body).lines() {
            for wrapped in wrap(line, style.width.map(|w| w.saturating_sub(4).max(20))) {
                text.push_str(&format!("    {wrapped}\n"));
            }
        }
    }
    let budgeted = root.policy.max_tokens.is_some() || root.policy.max_cost_usd.is_some();
    if !discussion.attempts.is_empty() {
        text.push_str("\nAttempts\n");
        for a in &discussion.attempts {
            let ended = a
                .ended_at_ms
                .map(|t| format!("ended {}", clock_time(t)))
                .unwrap_or_else(|| format!("due {}", clock_time(a.deadline_ms)));
            text.push_str(&format!(
                "turn {} · {} · {} · reserved {} · {ended}\n  {}",
                a.turn,
                a.agent_id,
                a.state.as_str(),
                clock_time(a.reserved_at_ms),
                a.attempt_id
            ));
            if let Some(reason) = &a.reason {
                text.push_str(&format!(" · {}", printable(reason, false)));
            }
            if let Some(into) = &a.into {
                text.push_str(&format!(" · {}", live_delivery(a, into)));
            }
            // Under a spend budget, a turn that said nothing of its cost
            // is worth a look; one whose report could not be read
            // exhausted the discussion.
            if a.usage_unreadable {
                text.push_str(" · usage unreadable");
            } else if budgeted && a.usage.is_none() && a.terminal_receipt {
                text.push_str(" · no usage reported");
            }
            text.push('\n');
        }
    }
    text.push_str(&findings_blocks(discussion, style));
    text
}

/// Where a live session's turn was delivered and whether it was picked
/// up: "into tmux:%3, delivered 12:00:01, picked up 12:00:04", or what is
/// still missing.
pub(crate) fn live_delivery(a: &Attempt, into: &str) -> String {
    let into = printable(into, false);
    match (a.delivered_at_ms, a.picked_up_at_ms) {
        (_, Some(picked)) => format!(
            "into {into}{}, picked up {}",
            a.delivered_at_ms
                .map(|d| format!(", delivered {}", clock_time(d)))
                .unwrap_or_default(),
            clock_time(picked)
        ),
        (Some(delivered), None) => {
            format!(
                "into {into}, delivered {}, not picked up",
                clock_time(delivered)
            )
        }
        (None, None) => format!("into {into}, not delivered"),
    }
}

/// One block a finding, like the transcript's: the kind, line and record
/// on one line, the message it concerns on the next, then the detail
/// wrapped at word boundaries to the terminal (never in a pipe), so ids
/// stay whole and the detail is readable at any width.
fn findings_blocks(discussion: &Discussion, style: &Style) -> String {
    if discussion.findings.is_empty() {
        return String::new();
    }
    let mut text = format!("\nIntegrity findings ({})\n", discussion.findings.len());
    for f in &discussion.findings {
        text.push_str(&format!(
            "\n{} · line {} · record {}\n",
            f.kind.as_str(),
            f.line,
            f.record_id
        ));
        if let Some(message) = &f.message_id
            && *message != f.record_id
        {
            text.push_str(&format!("  message {message}\n"));
        }
        let detail = printable(&f.detail, false);
        for wrapped in wrap(&detail, style.width.map(|w| w.saturating_sub(4).max(20))) {
            text.push_str(&format!("    {wrapped}\n"));
        }
    }
    text
}

/// `show --format markdown`: a heading with the status, participants and
/// budget, then a section a turn (from → to, type, time) with the whole
/// body: a `body` string as it is, any other JSON in a fenced block. For
/// pasting into an issue, a pull request or a report, where nothing is cut.
fn markdown(d: &Discussion) -> String {
    let mut text = format!("# Discussion `{}`: {}\n\n", d.id, d.status.as_str());
    if let Some(root) = &d.root {
        text.push_str(&format!(
            "- **Participants:** {} → {} (fleet {})\n",
            md_inline(&root.asker),
            md_inline(&root.peer),
            md_inline(&root.fleet_id)
        ));
        text.push_str(&format!(
            "- **Budget:** {} of {} turns used\n",
            d.turns_used,
            d.max_turns()
        ));
        if let Some(spend) = spend_text(d) {
            text.push_str(&format!("- **Spend:** {spend}\n"));
        }
        text.push_str(&format!(
            "- **Started:** {} · **deadline:** {}\n",
            format_ms(root.created_at_ms),
            format_ms(root.deadline_ms)
        ));
    }
    if let Some(escalation) = &d.escalation {
        text.push_str(&format!(
            "- **Escalated** at {} after {} ({} budget)\n",
            format_ms(escalation.at_ms),
            super::text::count(u64::from(escalation.turns_used), "turn", "turns"),
            escalation.reason
        ));
    }
    if !d.findings.is_empty() {
        text.push_str(&format!("- **Integrity findings:** {}\n", d.findings.len()));
    }
    for entry in &d.transcript {
        text.push_str(&format!(
            "\n## Turn {} · {} → {} · {}{} · {}\n\n",
            entry.turn,
            md_inline(&entry.from_agent_id),
            md_inline(&entry.to_agent_id),
            entry.kind.as_str(),
            if entry.close { " (closes)" } else { "" },
            format_ms(entry.at_ms)
        ));
        match entry.body.get("body").and_then(|b| b.as_str()) {
            Some(body) if entry.body.as_object().is_some_and(|o| o.len() == 1) => {
                text.push_str(&printable(body.trim_end(), true));
                text.push('\n');
            }
            _ => {
                // serde_json escapes C0 controls in strings, not C1 ones
                // nor bidirectional overrides; its own line breaks stay.
                let json = serde_json::to_string_pretty(&entry.body).unwrap_or_default();
                let json = printable(&json, true).into_owned();
                let fence = fence_for(&json);
                text.push_str(&format!("{fence}json\n{json}\n{fence}\n"));
            }
        }
    }
    text
}

/// Spend against the budgets, for a person: `1500 of 10000 tokens · $0.30
/// of $1.00`; a spend without its budget alone. `None` when nothing was
/// spent and there is no budget.
pub(super) fn spend_text(d: &Discussion) -> Option<String> {
    let policy = d.root.as_ref()?.policy;
    let spend = &d.spend;
    let mut parts = Vec::new();
    match policy.max_tokens {
        Some(max) => parts.push(format!("{} of {max} tokens", spend.tokens())),
        None if spend.tokens() > 0 => parts.push(format!("{} tokens", spend.tokens())),
        None => {}
    }
    match policy.max_cost_usd {
        Some(max) => parts.push(format!("{} of {}", dollars(spend.cost_usd), dollars(max))),
        None if spend.cost_usd > Usd::ZERO => parts.push(dollars(spend.cost_usd)),
        None => {}
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// `$0.30`, `$12.00`, `$0.0125`: at least cents, every digit there is.
pub(super) fn dollars(amount: Usd) -> String {
    let text = amount.to_string();
    let decimals = text.split_once('.').map_or(0, |(_, f)| f.len());
    match decimals {
        0 => format!("${text}.00"),
        1 => format!("${text}0"),
        _ => format!("${text}"),
    }
}

/// Agent and fleet ids are safe (`[A-Za-z0-9._-]`), but `_` would start
/// emphasis: they go in code spans.
fn md_inline(id: &str) -> String {
    format!("`{id}`")
}

/// A code fence longer than any run of backticks inside the text.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// For the fuzz target: every form of a discussion, without printing.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn render_all(discussion: Discussion, now_ms: i64) -> (Value, String, String) {
    let style = Style {
        color: false,
        width: Some(80),
    };
    let human = human(&discussion, now_ms, &style);
    let markdown = markdown(&discussion);
    let view = DiscussionView {
        discussion,
        now_ms,
        receipts: true,
        halted: None,
    };
    (super::Render::value(&view), human, markdown)
}

/// An escalation's reason, for a person.
pub(super) fn escalation_reason_text(reason: &str) -> String {
    match reason {
        "usage_unreadable" => "a usage report could not be read".to_owned(),
        "deadman" => "a turn passed its deadline".to_owned(),
        "expired" => "the conversation passed its deadline".to_owned(),
        "invalid" => "the discussion turned invalid".to_owned(),
        budget => format!("{budget} budget"),
    }
}
