//! The console's HTML. Everything shown comes from the contract's JSON
//! answers and goes through maud, which escapes it: whatever an agent
//! wrote (bodies, names, reasons) is text, never markup. Live parts carry
//! `data-live` with an id (the script swaps them); countdowns carry
//! `data-deadline-at`; rows and a discussion's `main` carry
//! `data-discussion-id` and `data-status` (`cli.md`, stable hooks).

use super::data::{Filter, Listed, Overview, PAGE_ROWS, Shown, Shows};
use crate::credentials::Principal;
use crate::discussion::Status;
use crate::error::Error;
use maud::{DOCTYPE, Markup, html};
use serde_json::Value;

/// A field of a JSON object as text ("" when absent or not a string).
fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

fn number(value: &Value, key: &str) -> Option<f64> {
    value.get(key).and_then(Value::as_f64)
}

fn items<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Milliseconds of an RFC 3339 time.
fn ms_of(at: &str) -> Option<i64> {
    at.parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

/// "4 min 2 s", "1 h 5 min", "3 d 2 h": a span for people.
fn span(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        3600..86_400 => format!("{} h {} min", s / 3600, (s % 3600) / 60),
        _ => format!("{} d {} h", s / 86_400, (s % 86_400) / 3600),
    }
}

/// A time as it reads beside `now_ms`: "3 min ago", "in 40 s".
fn when(at: &str, now_ms: i64) -> String {
    match ms_of(at) {
        Some(ms) if ms <= now_ms => format!("{} ago", span(now_ms - ms)),
        Some(ms) => format!("in {}", span(ms - now_ms)),
        None => "—".to_owned(),
    }
}

pub(super) fn time(at: &str, now_ms: i64) -> Markup {
    html! { @if at.is_empty() { "—" } @else { time datetime=(at) title=(at) { (when(at, now_ms)) } } }
}

/// A countdown the script ticks: the time left until `at`.
fn countdown(at: &str, now_ms: i64) -> Markup {
    let left = ms_of(at).map_or(0, |ms| ms - now_ms);
    html! {
        span.countdown data-deadline-at=(at) title=(at) {
            @if left > 0 { (span(left)) " left" } @else { "due" }
        }
    }
}

fn status(status: &str) -> Markup {
    html! { span class={ "status status-" (status) } { (status) } }
}

fn dollars(value: Option<f64>) -> String {
    match value {
        Some(usd) => format!("${usd:.2}"),
        None => "—".to_owned(),
    }
}

/// A body for people: JSON indented, as text.
fn body(payload: &Value) -> String {
    match payload {
        Value::String(text) => text.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// The frame of every page: the header with where to go and who is signed
/// in, and `main`.
pub(super) fn layout(
    title: &str,
    principal: Option<&Principal>,
    now_ms: i64,
    live_scope: Option<&str>,
    main: Markup,
) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                title { (title) " · discuss" }
                link rel="stylesheet" href="/assets/console.css";
                @if principal.is_some() { script src="/assets/console.js" defer {} }
            }
            body data-now=(now_ms) data-live-scope=[live_scope] {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    a.brand href="/" { "discuss" }
                    @if let Some(p) = principal {
                        nav aria-label="Pages" {
                            a href="/" { "Overview" }
                            a href="/discussions" { "Discussions" }
                        }
                        form.search method="get" action="/search" role="search" {
                            input type="search" name="q" aria-label="Search what agents said" placeholder="Search messages";
                        }
                        div.who {
                            span.signal #signal role="status" aria-live="polite" { "connecting" }
                            span { (p.agent_id) @if p.is_operator() { " (operator)" } }
                            form method="post" action="/logout" {
                                button type="submit" { "Sign out" }
                            }
                        }
                    }
                }
                (main)
            }
        }
    }
}

pub(super) fn login(problem: Option<&str>) -> Markup {
    layout(
        "Sign in",
        None,
        0,
        None,
        html! {
            main #main .narrow {
                h1 { "Sign in" }
                p { "Paste a token of this ledger: an operator's sees and steers the whole fleet, an agent's sees its own discussions." }
                @if let Some(problem) = problem { p.problem role="alert" { (problem) } }
                form method="post" action="/login" {
                    label for="token" { "Token" }
                    input #token name="token" type="password" autocomplete="off" required autofocus
                        placeholder="dsk_…";
                    button type="submit" { "Sign in" }
                }
                p.hint { "A token is made with " code { "discuss token issue NAME --operator" } ". It is kept in a cookie this page's scripts cannot read." }
            }
        },
    )
}

pub(super) fn error(err: &Error, principal: Option<&Principal>) -> Markup {
    layout(
        "Error",
        principal,
        0,
        None,
        html! {
            main #main .narrow {
                h1 { "That did not work" }
                p.problem role="alert" { (err.message) }
                p { "Error code " code { (err.code.as_str()) } }
                @for hint in &err.hints { p.hint { (hint) } }
                p { a href="/" { "Back to the overview" } }
            }
        },
    )
}

pub(super) fn overview(shown: &Shown, principal: &Principal) -> Markup {
    let Shows::Overview(o) = &shown.what else {
        return html! {};
    };
    let now = shown.now_ms;
    layout(
        "Overview",
        Some(principal),
        now,
        None,
        html! {
            main #main {
                h1 { "Overview" }
                @if principal.is_operator() {
                    section #approvals data-live aria-label="Needs a person" {
                        h2 { "Needs a person" }
                        (approvals(o, now))
                    }
                }
                section #escalations data-live {
                    h2 { "Escalations" }
                    (escalations(o, now))
                }
                section #counts data-live aria-label="Discussions by status" {
                    ul.tiles {
                        @for (name, n) in &o.counts {
                            li { a class={ "tile status-" (name) } href={ "/discussions?status=" (name) } {
                                span.n { (n) } span.label { (name) }
                            } }
                        }
                    }
                }
                div.columns {
                    section #live data-live {
                        h2 { "Live turns" }
                        @if o.live.is_empty() { p.quiet { "No agent is taking a turn." } }
                        @else { (rows_table(&o.live, now, true)) }
                        @if o.live_total > o.live.len() {
                            p.quiet { (o.live_total - o.live.len()) " more: " a href="/discussions?status=active" { "every active discussion" } }
                        }
                    }
                    section #switches data-live {
                        h2 { "Halts" }
                        (switches(&o.switches, now, principal.is_operator()))
                    }
                }
                @if principal.is_operator() { (engage_form("global", None, "/")) }
                section #spend data-live {
                    h2 { "Spend and quotas" }
                    (spend(&o.quota))
                }
                @if let Some(tokens) = &o.tokens {
                    section #tokens data-live {
                        h2 { "Tokens" }
                        (tokens_table(tokens, now))
                    }
                }
            }
        },
    )
}

/// Rows of `list` as a table; `live`: with each live turn's countdown.
fn rows_table(rows: &[Value], now: i64, live: bool) -> Markup {
    html! {
        div.scroll { table {
            thead { tr {
                th scope="col" { "Discussion" } th scope="col" { "Status" }
                th.opt scope="col" { "Participants" } th.opt scope="col" { "Turns" }
                @if live { th scope="col" { "Time left" } } @else { th.opt scope="col" { "Next" } th scope="col" { "Updated" } }
            } }
            tbody {
                @for row in rows {
                    @let id = text(row, "discussion_id");
                    @let participants: Vec<&str> = items(row, "participants").iter().filter_map(Value::as_str).collect();
                    tr data-discussion-id=(id) data-status=(text(row, "status")) {
                        td { a.id href={ "/discussions/" (id) } title=(id) { (short(id)) } }
                        td { (status(text(row, "status")))
                             @if row.get("halted").is_some_and(|h| !h.is_null()) { " " span.badge.halted { "halted" } }
                             @if row.get("escalated") == Some(&Value::Bool(true)) { " " span.badge { "escalated" } } }
                        td.opt { (participants.join(" ↔ ")) }
                        td.num.opt { (row.get("turns_used").unwrap_or(&Value::Null)) "/" (row.get("max_turns").unwrap_or(&Value::Null)) }
                        @if live {
                            td { (countdown(text(row, "live_attempt_deadline_at"), now)) }
                        } @else {
                            td.opt { @if let (Some(next), "open" | "active") = (row.get("head_to_agent_id").and_then(Value::as_str), text(row, "status")) { (next) } @else { "—" } }
                            td.nowrap { (time(text(row, "updated_at"), now)) }
                        }
                    }
                }
            }
        } }
    }
}

/// An id shortened for a table: its kind and the first and last of its
/// digits (ids made close together share their first digits, their time);
/// the whole id is in the link's address and title.
pub(super) fn short(id: &str) -> String {
    let chars: Vec<char> = id.chars().collect();
    if chars.len() <= 20 {
        return id.to_owned();
    }
    let head: String = chars[..8].iter().collect();
    let tail: String = chars[chars.len() - 8..].iter().collect();
    format!("{head}…{tail}")
}

fn scope_of(switch: &Value) -> (String, String) {
    match switch.get("scope") {
        Some(Value::Object(scope)) => scope
            .iter()
            .next()
            .map(|(kind, target)| (kind.clone(), target.as_str().unwrap_or("").to_owned()))
            .unwrap_or_else(|| ("global".into(), String::new())),
        _ => ("global".into(), String::new()),
    }
}

fn switches(view: &Value, now: i64, operator: bool) -> Markup {
    let mut engaged: Vec<&Value> = Vec::new();
    if view.get("engaged") == Some(&Value::Bool(true)) {
        engaged.push(view);
    }
    engaged.extend(items(view, "scopes"));
    html! {
        @if engaged.is_empty() { p.quiet { "No switch is engaged: wakes may run." } }
        ul.switches {
            @for switch in &engaged {
                @let (kind, target) = scope_of(switch);
                li.engaged data-scope=(kind) {
                    strong { @if kind == "global" { "Everything" } @else { (kind) " " code { (target) } } }
                    " halted: " span.reason { (text(switch, "reason")) }
                    span.meta { " by " (text(switch, "changed_by")) ", " (time(text(switch, "changed_at"), now)) }
                    @if operator {
                        form.inline method="post" action="/console/kill-switch" {
                            input type="hidden" name="engaged" value="false";
                            input type="hidden" name="scope" value=(kind);
                            input type="hidden" name="target" value=(target);
                            input type="hidden" name="back" value="/";
                            button type="submit" aria-label={ "Release the halt of " (if kind == "global" { "everything".to_owned() } else { format!("{kind} {target}") }) } { "Release" }
                        }
                    }
                }
            }
        }
    }
}

/// The form that engages a switch. `scope` preset on a discussion's page.
fn engage_form(scope: &str, target: Option<&str>, back: &str) -> Markup {
    html! {
        form.engage method="post" action="/console/kill-switch" aria-label="Engage a halt" {
            input type="hidden" name="engaged" value="true";
            input type="hidden" name="back" value=(back);
            @if let Some(target) = target {
                input type="hidden" name="scope" value=(scope);
                input type="hidden" name="target" value=(target);
            } @else {
                label { "Halt " select name="scope" {
                    option value="global" { "everything" }
                    option value="fleet" { "a fleet" }
                    option value="agent" { "an agent" }
                    option value="discussion" { "a discussion" }
                } }
                label { "named " input name="target" placeholder="fleet, agent or dsc_…"; }
            }
            label { "because " input name="reason" required placeholder="why (recorded)"; }
            button.danger type="submit" { "Engage halt" }
        }
    }
}

/// The approval requests that wait for the operator, each with Grant and
/// Deny (a denial says why); the decision is the CLI's `approve`/`deny`.
fn approvals(o: &Overview, now: i64) -> Markup {
    html! {
        @if o.approvals.is_empty() { p.quiet { "No approval waits for a person." } }
        ul.approvals {
            @for decided in &o.approvals {
                @let (d, a) = (&decided.discussion, &decided.approval);
                @let id = a.approval_id.as_str();
                @let expires = crate::clock::format_ms(a.expires_ms);
                li.approval data-approval-id=(id) data-discussion-id=(d.id) {
                    p {
                        strong { "Turn " (a.turn) " of " code { (a.agent_id) } }
                        " in " a.id href={ "/discussions/" (d.id) } title=(d.id) { (short(&d.id)) }
                        @if let Some(root) = &d.root { " (" (root.fleet_id) ")" }
                        " waits for a person (the gate asks " (crate::output::asks_when(&a.rule)) ")."
                    }
                    p.meta {
                        "Spent so far " (a.spend["tokens"].as_u64().unwrap_or(0)) " tokens, "
                        (dollars(a.spend["cost_usd"].as_f64()))
                        " · requested by " (a.requested_by) " " (time(&crate::clock::format_ms(a.requested_at_ms), now))
                        " · reads as denied in " (countdown(&expires, now))
                        " · " code { "discuss approve " (id) }
                    }
                    form.inline method="post" action="/console/approvals" {
                        input type="hidden" name="approval_id" value=(id);
                        input type="hidden" name="decision" value="grant";
                        input type="hidden" name="back" value="/";
                        button type="submit" aria-label={ "Grant " (id) } { "Grant" }
                    }
                    form.inline method="post" action="/console/approvals" {
                        input type="hidden" name="approval_id" value=(id);
                        input type="hidden" name="decision" value="deny";
                        input type="hidden" name="back" value="/";
                        label { "because " input name="reason" required placeholder="why (recorded)" aria-label={ "Why deny " (id) }; }
                        button.danger type="submit" aria-label={ "Deny " (id) } { "Deny" }
                    }
                }
            }
        }
    }
}

fn escalations(o: &Overview, now: i64) -> Markup {
    html! {
        @if o.escalations.is_empty() && o.due.is_empty() { p.quiet { "No unresolved end." } }
        @if !o.escalations.is_empty() {
            p.quiet { (o.escalated) " escalated in all" @if o.escalated > o.escalations.len() { ", the newest " (o.escalations.len()) " shown" } "." }
            div.scroll { table {
                thead { tr { th scope="col" { "Discussion" } th scope="col" { "Reason" } th.opt scope="col" { "When" } th scope="col" { "A person heard" } } }
                tbody { @for d in &o.escalations {
                    @let e = d.get("escalation").unwrap_or(&Value::Null);
                    @let id = text(d, "discussion_id");
                    tr data-discussion-id=(id) data-status=(text(d, "status")) {
                        td { a.id href={ "/discussions/" (id) } title=(id) { (short(id)) } }
                        td { (text(e, "reason")) }
                        td.opt { (time(text(e, "at"), now)) }
                        td { (delivery(e.get("delivery").unwrap_or(&Value::Null), now)) }
                    }
                } }
            } }
        }
        @if !o.due.is_empty() {
            h3 { "Due, not recorded yet" }
            p.quiet { "These ended unresolved by time alone; the next writer or " code { "discuss escalations deliver" } " records them." }
            (rows_table(&o.due, now, false))
            @if o.due_total > o.due.len() { p.quiet { (o.due_total - o.due.len()) " more in " a href="/discussions" { "the list" } "." } }
        }
    }
}

fn delivery(d: &Value, now: i64) -> Markup {
    let delivered = text(d, "delivered_at");
    let failures = items(d, "failures").len();
    html! {
        @if !delivered.is_empty() { span.ok { "delivered " (time(delivered, now)) } }
        @else if failures > 0 { span.warn { "pending, " (failures) " failed" } @if !text(d, "next_attempt_at").is_empty() { ", retry " (time(text(d, "next_attempt_at"), now)) } }
        @else { span.warn { "pending" } }
    }
}

/// "12 / 30" with a bar, or the used amount alone without a cap.
/// What an amount counts: wakes or tokens, or dollars.
#[derive(Clone, Copy)]
enum Unit {
    Count,
    Dollars,
}

impl Unit {
    fn show(self, amount: f64) -> String {
        match self {
            Unit::Count => format!("{amount}"),
            Unit::Dollars => dollars(Some(amount)),
        }
    }
}

/// `used` of `cap` (a field of `value` each, `used` 0 when absent) with a
/// bar, or `used` alone without a cap.
fn against(value: &Value, used: &str, limits: &Value, cap: &str, unit: Unit) -> Markup {
    let (used, cap) = (number(value, used).unwrap_or(0.0), number(limits, cap));
    html! {
        @if let Some(cap) = cap.filter(|c| *c > 0.0) {
            @let percent = (used / cap * 100.0).clamp(0.0, 100.0);
            span.meter { (unit.show(used)) " of " (unit.show(cap)) }
            meter min="0" max="100" value=(format!("{percent:.0}")) high="80" optimum="0" { (format!("{percent:.0}")) "%" }
        } @else { (unit.show(used)) span.quiet { " (no cap)" } }
    }
}

fn spend(quota: &Value) -> Markup {
    let agents = items(quota, "agents");
    html! {
        @if agents.is_empty() { p.quiet { "No agent was woken yet." } }
        @else { div.scroll { table {
            thead { tr { th scope="col" { "Agent" } th scope="col" { "Wakes, last hour" } th scope="col" { "Tokens, last hour" } th scope="col" { "Cost, last day" } } }
            tbody { @for a in agents {
                tr {
                    td { (text(a, "agent_id")) }
                    td { (against(a, "wakes_last_hour", a, "wakes_per_hour", Unit::Count)) }
                    td { (against(a, "tokens_last_hour", a, "tokens_per_hour", Unit::Count)) }
                    td { (against(a, "cost_usd_last_day", a, "cost_usd_per_day", Unit::Dollars)) }
                }
            } }
        } } }
    }
}

fn tokens_table(tokens: &Value, now: i64) -> Markup {
    let tokens = items(tokens, "tokens");
    html! {
        @if tokens.is_empty() { p.quiet { "No token." } }
        @else { div.scroll { table {
            thead { tr { th scope="col" { "Token" } th scope="col" { "Acts as" } th scope="col" { "State" } th.opt scope="col" { "Expires" } th { span.visually-hidden { "Revoke" } } } }
            tbody { @for t in tokens {
                @let id = text(t, "token_id");
                tr data-token-id=(id) {
                    td { code title=(id) { (short(id)) } }
                    td { (text(t, "agent_id")) @if text(t, "role") == "operator" { " (operator)" } }
                    td { (text(t, "state")) }
                    td.opt { (time(text(t, "expires_at"), now)) }
                    td { @if text(t, "state") == "active" {
                        form.inline method="post" action="/console/tokens/revoke" {
                            input type="hidden" name="token_id" value=(id);
                            input type="hidden" name="back" value="/";
                            button.danger type="submit" aria-label={ "Revoke " (id) } { "Revoke" }
                        }
                    } }
                }
            } }
        } } }
    }
}

pub(super) fn list(shown: &Shown, filter: &Filter, principal: &Principal) -> Markup {
    let Shows::List(Listed { rows, total }) = &shown.what else {
        return html! {};
    };
    let pages = total.div_ceil(PAGE_ROWS).max(1);
    let link = |page: usize| {
        let mut query = vec![format!("page={page}")];
        for (key, value) in [
            ("status", &filter.status),
            ("agent", &filter.agent),
            ("fleet", &filter.fleet),
        ] {
            if let Some(value) = value {
                query.push(format!("{key}={}", encode(value)));
            }
        }
        format!("/discussions?{}", query.join("&"))
    };
    layout(
        "Discussions",
        Some(principal),
        shown.now_ms,
        None,
        html! {
            main #main {
                h1 { "Discussions" }
                form.filters method="get" action="/discussions" aria-label="Filter" {
                    label { "Status " select name="status" {
                        option value="" { "any" }
                        @for s in Status::ALL {
                            option value=(s.as_str()) selected[filter.status.as_deref() == Some(s.as_str())] { (s.as_str()) }
                        }
                    } }
                    label { "Agent " input name="agent" value=[filter.agent.as_deref()]; }
                    label { "Fleet " input name="fleet" value=[filter.fleet.as_deref()]; }
                    button type="submit" { "Filter" }
                }
                section #rows data-live {
                    p.quiet { (total) " discussions, newest first" @if pages > 1 { "; page " (filter.page) " of " (pages) } "." }
                    @if !rows.is_empty() { (rows_table(rows, shown.now_ms, false)) }
                    nav.pager aria-label="Pages" {
                        @if filter.page > 1 { a href=(link(filter.page - 1)) rel="prev" { "← Newer" } }
                        @if filter.page < pages { a href=(link(filter.page + 1)) rel="next" { "Older →" } }
                    }
                }
            }
        },
    )
}

/// A query value, percent-encoded.
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A receipt in one line: what it says, of whom, when.
fn receipt(r: &Value, now: i64) -> Markup {
    html! {
        div.receipt {
            code { (text(r, "receipt")) }
            @if !text(r, "agent_id").is_empty() { " " (text(r, "agent_id")) }
            @if let Some(turn) = r.get("turn").filter(|t| !t.is_null()) { " turn " (turn) }
            @if !text(r, "reason").is_empty() { ", " (text(r, "reason")) }
            span.meta { " " (time(text(r, "at"), now)) }
        }
    }
}

/// The receipts of one attempt, from every message's, in time order
/// (one receipt is under each message it concerns: shown once).
fn receipts_of<'a>(d: &'a Value, attempt_id: &str) -> Vec<&'a Value> {
    let mut seen = std::collections::HashSet::new();
    let mut own: Vec<&Value> = items(d, "transcript")
        .iter()
        .flat_map(|m| items(m, "receipts"))
        .filter(|r| text(r, "attempt_id") == attempt_id)
        .filter(|r| seen.insert(text(r, "receipt_id")))
        .collect();
    own.sort_by_key(|r| ms_of(text(r, "at")).unwrap_or(0));
    own
}

/// One discussion's page. Long because it is one template: the header,
/// the facts, the escalation and findings, the transcript and the
/// attempts read top to bottom as the page does; the repeated pieces
/// (`countdown`, `against`, `receipt`, `delivery`) are functions.
pub(super) fn discussion(shown: &Shown, principal: &Principal) -> Markup {
    let Shows::Discussion(d) = &shown.what else {
        return html! {};
    };
    let now = shown.now_ms;
    let id = text(d, "discussion_id");
    let policy = d.get("policy").unwrap_or(&Value::Null);
    let spend = d.get("spend").unwrap_or(&Value::Null);
    let participants: Vec<&str> = items(d, "participants")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let halted = d.get("halted").filter(|h| !h.is_null());
    let live_attempt = items(d, "attempts")
        .iter()
        .find(|a| matches!(text(a, "state"), "reserved" | "started"));
    let settled = !text(d, "terminal_at").is_empty();
    let back = format!("/discussions/{id}");
    layout(
        id,
        Some(principal),
        now,
        Some(id),
        html! {
            main #main data-discussion-id=(id) data-status=(text(d, "status")) {
                div #summary data-live {
                    h1 { "Discussion " code.id { (id) } }
                    p.lede { (status(text(d, "status"))) " "
                        (participants.join(" ↔ ")) " in fleet " (text(d, "fleet_id"))
                        ", started " (time(text(d, "created_at"), now)) }
                    dl.facts {
                        div { dt { "Turns" } dd { (d.get("turns_used").unwrap_or(&Value::Null)) " of " (policy.get("max_turns").unwrap_or(&Value::Null)) } }
                        // An ended discussion's deadline no longer matters: when it ended does.
                        @if settled {
                            div { dt { "Ended" } dd { (time(text(d, "terminal_at"), now)) } }
                        } @else {
                            div { dt { "Conversation deadline" } dd { (countdown(text(policy, "conversation_deadline_at"), now)) } }
                        }
                        div { dt { "Live turn" } dd {
                            @if let Some(a) = live_attempt { (text(a, "agent_id")) ", turn " (a.get("turn").unwrap_or(&Value::Null)) ": " (countdown(text(a, "deadline_at"), now)) }
                            @else { "none" } } }
                        div { dt { "Tokens" } dd { (against(spend, "tokens", policy, "max_tokens", Unit::Count)) } }
                        div { dt { "Cost" } dd { (against(spend, "cost_usd", policy, "max_cost_usd", Unit::Dollars)) } }
                        div { dt { "Halt" } dd {
                            @if let Some(h) = halted {
                                @let (kind, target) = scope_of(h);
                                span.badge.halted { "halted" } " by the " (kind) " switch" @if !target.is_empty() { " " code { (target) } } ": " (text(h, "reason"))
                                @if principal.is_operator() {
                                    form.inline method="post" action="/console/kill-switch" {
                                        input type="hidden" name="engaged" value="false";
                                        input type="hidden" name="scope" value=(kind);
                                        input type="hidden" name="target" value=(target);
                                        input type="hidden" name="back" value=(back);
                                        button type="submit" aria-label="Release this halt" { "Release" }
                                    }
                                }
                            } @else { "none" }
                        } }
                    }
                    @if let Some(e) = d.get("escalation").filter(|e| !e.is_null()) {
                        section.escalation aria-label="Escalation" {
                            h2 { "Escalation" }
                            p { "Escalated " (time(text(e, "at"), now)) " for " strong { (text(e, "reason")) } " (receipt " code { (text(e, "receipt_id")) } "): "
                                (delivery(e.get("delivery").unwrap_or(&Value::Null), now)) }
                        }
                    }
                    @let findings = items(d, "integrity_findings");
                    @if !findings.is_empty() {
                        section.findings aria-label="Integrity findings" {
                            h2 { "Integrity findings" }
                            ul { @for f in findings { li { code { (text(f, "code")) } " " (text(f, "message")) } } }
                        }
                    }
                }
                @if principal.is_operator() && halted.is_none() && !settled {
                    (engage_form("discussion", Some(id), &back))
                }
                section #timeline data-live aria-label="Transcript and receipts" {
                    h2 { "Transcript" }
                    ol.timeline {
                        @for m in items(d, "transcript") {
                            li.message data-type=(text(m, "type")) {
                                div.head {
                                    span.turn { "Turn " (m.get("turn").unwrap_or(&Value::Null)) }
                                    " " span.type { (text(m, "type")) }
                                    " " (text(m, "from_agent_id")) " → " (text(m, "to_agent_id"))
                                    @if m.get("close") == Some(&Value::Bool(true)) { " " span.badge { "closes" } }
                                    span.meta { " " (time(text(m, "at"), now)) ", by " (text(m, "by"))
                                        @if !text(m, "token_id").is_empty() { " (token " code { (text(m, "token_id")) } ")" } }
                                }
                                pre.body { (body(m.get("payload").unwrap_or(&Value::Null))) }
                                // An attempt's receipts are shown with it, below.
                                @for r in items(m, "receipts").iter().filter(|r| text(r, "attempt_id").is_empty()) {
                                    (receipt(r, now))
                                }
                            }
                        }
                    }
                    h2 { "Attempts" }
                    @let attempts = items(d, "attempts");
                    @if attempts.is_empty() { p.quiet { "No agent was woken yet." } }
                    @else { div.scroll { table {
                        thead { tr { th scope="col" { "Turn" } th scope="col" { "Agent" } th scope="col" { "State" } th.opt scope="col" { "Reserved" } th scope="col" { "Deadline" } th.opt scope="col" { "Ended" } th scope="col" { "Usage" } } }
                        tbody { @for a in attempts {
                            tr data-attempt-id=(text(a, "attempt_id")) {
                                td.num { (a.get("turn").unwrap_or(&Value::Null)) }
                                td { (text(a, "agent_id")) }
                                td { (text(a, "state")) @if !text(a, "reason").is_empty() { " (" (text(a, "reason")) ")" }
                                     @if let Some(code) = a.get("exit_code").filter(|c| !c.is_null()) { ", exit " (code) }
                                     @if !text(a, "into").is_empty() { br; span.meta.delivery {
                                         "into " code { (text(a, "into")) } ", "
                                         @if text(a, "delivered_at").is_empty() { "not delivered" } @else { "delivered " (time(text(a, "delivered_at"), now)) }
                                         @if !text(a, "picked_up_at").is_empty() { ", picked up " (time(text(a, "picked_up_at"), now)) }
                                         @else if !text(a, "delivered_at").is_empty() { ", not picked up" }
                                     } } }
                                td.opt { (time(text(a, "reserved_at"), now)) }
                                td { @if matches!(text(a, "state"), "reserved" | "started") { (countdown(text(a, "deadline_at"), now)) } @else { span.quiet title=(text(a, "deadline_at")) { "—" } } }
                                td.opt { (time(text(a, "ended_at"), now)) }
                                td { @if let Some(u) = a.get("usage").filter(|u| !u.is_null()) {
                                    (number(u, "input_tokens").unwrap_or(0.0) + number(u, "output_tokens").unwrap_or(0.0)) " tokens, " (dollars(number(u, "cost_usd")))
                                } @else { "—" } }
                            }
                            @let own = receipts_of(d, text(a, "attempt_id"));
                            @if !own.is_empty() {
                                tr.receipts { td colspan="7" { @for r in own { (receipt(r, now)) } } }
                            }
                        } }
                    } } }
                }
            }
        },
    )
}
