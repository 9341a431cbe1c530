//! What each console page shows, read on the blocking pool as the CLI's
//! answers (the contract's JSON: `list`'s rows, `show`, `kill-switch
//! status`, `quota show`, `token list`), and the one copy of a page that
//! every open console of one viewer shares while the ledger stays as it
//! was: an append that refreshes 200 open pages derives each page once.

use crate::credentials::Principal;
use crate::discussion::{Row, Status};
use crate::error::{Error, ErrorCode, Result};
use crate::output::{KillSwitchView, QuotaView, Render, RowsView, TokensView};
use crate::session::Session;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Rows on a page of the list.
pub(super) const PAGE_ROWS: usize = 50;
/// Escalations the overview shows with their delivery (each is a read of
/// its discussion); the rest are counted.
const ESCALATIONS_SHOWN: usize = 12;
/// Live turns and due ends the overview shows at most (the list has the
/// rest): the page stays light whatever the fleet does.
pub(super) const OVERVIEW_ROWS: usize = 50;
/// How long a page read stays good when the ledger does not change: a
/// status reached by time alone shows within it.
const FRESH_FOR: Duration = Duration::from_millis(500);
/// Pages kept at most (viewers times pages); past it the copies are
/// dropped and read again.
const MOST_KEPT: usize = 512;

/// A page and what it asks.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Page {
    Overview,
    List(Filter),
    Discussion(String),
}

/// The list's filters and page, from its query string.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct Filter {
    pub status: Option<String>,
    pub agent: Option<String>,
    pub fleet: Option<String>,
    /// From 1.
    pub page: usize,
}

impl Filter {
    pub(super) fn of(query: Option<&str>) -> Result<Filter> {
        let pairs = super::query_pairs(query, &["status", "agent", "fleet", "page"])?;
        let given = |key: &str| -> Result<Option<String>> {
            Ok(super::single(&pairs, key)?
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned))
        };
        let status = given("status")?;
        if let Some(status) = &status {
            crate::operations::lists::parse_statuses(std::slice::from_ref(status))?;
        }
        let (agent, fleet) = (given("agent")?, given("fleet")?);
        if let Some(agent) = &agent {
            crate::ids::check_name("agent", agent)?;
        }
        if let Some(fleet) = &fleet {
            crate::ids::check_name("fleet", fleet)?;
        }
        let page = match given("page")? {
            None => 1,
            Some(page) => page
                .parse::<usize>()
                .ok()
                .filter(|p| *p >= 1)
                .ok_or_else(|| {
                    Error::new(ErrorCode::InvalidArgument, "page is a number from 1")
                        .detail("field", "page")
                })?,
        };
        Ok(Filter {
            status,
            agent,
            fleet,
            page,
        })
    }
}

/// What a page shows.
pub(super) struct Shown {
    pub now_ms: i64,
    pub what: Shows,
}

pub(super) enum Shows {
    Overview(Box<Overview>),
    List(Listed),
    Discussion(Value),
}

pub(super) struct Overview {
    /// The approval requests that wait for a person, oldest first (the
    /// operator's only: an agent learns nothing of them).
    pub approvals: Vec<crate::operations::approvals::Decided>,
    /// Discussions by status, in the precedence order.
    pub counts: Vec<(&'static str, usize)>,
    /// `list`'s rows with a live attempt (at most `OVERVIEW_ROWS`), and
    /// how many there are.
    pub live: Vec<Value>,
    pub live_total: usize,
    /// The newest escalations, each `show`'s answer.
    pub escalations: Vec<Value>,
    /// Escalations in all, and ends due one that no writer recorded yet.
    pub escalated: usize,
    pub due: Vec<Value>,
    pub due_total: usize,
    pub switches: Value,
    pub quota: Value,
    /// The operator's only.
    pub tokens: Option<Value>,
}

pub(super) struct Listed {
    pub rows: Vec<Value>,
    pub total: usize,
}

/// A viewer and a page.
type Key = (Option<String>, Page);

/// The pages read, by viewer and page, and a gate for each: while one
/// request reads a page the others for it wait and take its reading
/// (200 consoles refreshed by one append make one reading, not 200).
#[derive(Default)]
pub(super) struct Cache {
    kept: Mutex<HashMap<Key, Kept>>,
    gates: Mutex<HashMap<Key, Arc<Mutex<()>>>>,
}

struct Kept {
    version: u64,
    read_at: Instant,
    shown: Arc<Shown>,
}

/// `page` as `principal` sees it now: the copy read for the same viewer at
/// the same version of the ledger within `FRESH_FOR`, else a new read.
pub(super) async fn page(
    app: &super::App,
    cache: &Arc<Cache>,
    principal: &Principal,
    page: Page,
) -> Result<Arc<Shown>> {
    let viewer = principal.acting_agent().map(str::to_owned);
    let cache = Arc::clone(cache);
    app.blocking(move |session| {
        let key = (viewer, page);
        let gate = {
            let mut gates = cache.gates.lock().unwrap_or_else(|e| e.into_inner());
            if gates.len() >= MOST_KEPT {
                gates.clear();
            }
            Arc::clone(gates.entry(key.clone()).or_default())
        };
        let _reading = gate.lock().unwrap_or_else(|e| e.into_inner());
        let version = session.ledger.version();
        if let Some(version) = version {
            let kept = cache.kept.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(kept) = kept.get(&key)
                && kept.version == version
                && kept.read_at.elapsed() < FRESH_FOR
            {
                return Ok(Arc::clone(&kept.shown));
            }
        }
        let shown = Arc::new(read(session, key.0.as_deref(), &key.1)?);
        if let Some(version) = version {
            let mut kept = cache.kept.lock().unwrap_or_else(|e| e.into_inner());
            if kept.len() >= MOST_KEPT {
                kept.clear();
            }
            kept.insert(
                key,
                Kept {
                    version,
                    read_at: Instant::now(),
                    shown: Arc::clone(&shown),
                },
            );
        }
        Ok(shown)
    })
    .await
}

/// Reads `page` for `viewer` (an agent: its own discussions only).
fn read(session: &Session, viewer: Option<&str>, page: &Page) -> Result<Shown> {
    match page {
        Page::Overview => overview(session, viewer),
        Page::List(filter) => list(session, viewer, filter),
        Page::Discussion(id) => {
            let mut request = Map::new();
            request.insert("discussion_id".into(), id.as_str().into());
            let caller = crate::tools::Caller {
                agent: viewer,
                own_only: viewer.is_some(),
            };
            let shown = crate::tools::answer(session, "get_discussion", request, caller)?;
            Ok(Shown {
                now_ms: session.now(None),
                what: Shows::Discussion(shown),
            })
        }
    }
}

/// `list`'s rows of `viewer` (all, for the operator), newest first.
fn rows(
    session: &Session,
    viewer: Option<&str>,
    statuses: &[Status],
    agent: Option<&str>,
    fleet: Option<&str>,
) -> Result<(Vec<Row>, i64)> {
    let (mut rows, now) =
        crate::operations::lists::listed(session, statuses, viewer.or(agent), fleet)?;
    if let (Some(_), Some(agent)) = (viewer, agent) {
        rows.retain(|row| row.participants.iter().any(|p| p == agent));
    }
    Ok((rows, now))
}

/// Rows as `list --json` gives them (with `switches`, the ones that halt
/// them).
fn rows_json(rows: Vec<Row>, now_ms: i64, switches: &crate::global::Switches) -> Vec<Value> {
    let view = RowsView {
        rows,
        now_ms,
        empty: String::new(),
        known_ids: Vec::new(),
        live_turns: false,
        switches: switches.clone(),
    };
    match view.value() {
        Value::Object(mut object) => match object.remove("discussions") {
            Some(Value::Array(rows)) => rows,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn list(session: &Session, viewer: Option<&str>, filter: &Filter) -> Result<Shown> {
    let statuses = match &filter.status {
        Some(status) => crate::operations::lists::parse_statuses(std::slice::from_ref(status))?,
        None => Vec::new(),
    };
    let (rows, now_ms) = rows(
        session,
        viewer,
        &statuses,
        filter.agent.as_deref(),
        filter.fleet.as_deref(),
    )?;
    let total = rows.len();
    let shown: Vec<Row> = rows
        .into_iter()
        .skip((filter.page - 1).saturating_mul(PAGE_ROWS))
        .take(PAGE_ROWS)
        .collect();
    Ok(Shown {
        now_ms,
        what: Shows::List(Listed {
            rows: rows_json(
                shown,
                now_ms,
                &crate::operations::read::switches(session, now_ms)?,
            ),
            total,
        }),
    })
}

/// Ends that are due an escalation (`engine::due_escalation`): the
/// unresolved ones.
const UNRESOLVED: [Status; 4] = [
    Status::Invalid,
    Status::Deadman,
    Status::Expired,
    Status::Exhausted,
];

fn overview(session: &Session, viewer: Option<&str>) -> Result<Shown> {
    let (rows, now_ms) = rows(session, viewer, &[], None, None)?;
    let counts = Status::ALL
        .iter()
        .map(|status| {
            let n = rows.iter().filter(|row| row.status == *status).count();
            (status.as_str(), n)
        })
        .collect();
    let live_total = rows
        .iter()
        .filter(|row| row.live_attempt_id.is_some())
        .count();
    let live: Vec<Row> = rows
        .iter()
        .filter(|row| row.live_attempt_id.is_some())
        .take(OVERVIEW_ROWS)
        .cloned()
        .collect();
    let escalated: Vec<&Row> = rows.iter().filter(|row| row.escalated).collect();
    let is_due = |row: &&Row| !row.escalated && UNRESOLVED.contains(&row.status);
    let due_total = rows.iter().filter(is_due).count();
    let due: Vec<Row> = rows
        .iter()
        .filter(is_due)
        .take(OVERVIEW_ROWS)
        .cloned()
        .collect();
    let mut escalations = Vec::new();
    for row in escalated.iter().take(ESCALATIONS_SHOWN) {
        let mut request = Map::new();
        request.insert("discussion_id".into(), row.id.as_str().into());
        request.insert("include_receipts".into(), false.into());
        let caller = crate::tools::Caller {
            agent: viewer,
            own_only: viewer.is_some(),
        };
        escalations.push(crate::tools::answer(
            session,
            "get_discussion",
            request,
            caller,
        )?);
    }
    let approvals = match viewer {
        None => crate::operations::approvals::requests(
            session,
            Some(crate::discussion::ApprovalState::Pending),
        )?,
        Some(_) => Vec::new(),
    };
    // One read of the global state: quotas, switches, tokens, and the
    // switches that halt the rows shown.
    let view = session.ledger.view(&[])?;
    let global = view.global(now_ms);
    let halts = global.switches();
    let mut quota = QuotaView::of(&global, now_ms).value();
    if let (Some(viewer), Some(Value::Array(agents))) = (viewer, quota.get_mut("agents")) {
        agents.retain(|a| a.get("agent_id").and_then(Value::as_str) == Some(viewer));
    }
    let mut switches = KillSwitchView::from(&*global).value();
    if let Some(viewer) = viewer {
        // An agent sees the switches that cover it: the global one, its
        // fleets', its own and its discussions'; not who else is halted.
        let own: std::collections::HashSet<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        let covers = |scope: &Value| match scope.as_object().and_then(|o| o.iter().next()) {
            Some((kind, target)) => {
                let target = target.as_str().unwrap_or("");
                match kind.as_str() {
                    "fleet" => global.members(target).is_some_and(|m| m.contains(viewer)),
                    "agent" => target == viewer,
                    "discussion" => own.contains(target),
                    _ => false,
                }
            }
            None => true,
        };
        if let Some(Value::Array(scopes)) = switches.get_mut("scopes") {
            scopes.retain(|s| covers(s.get("scope").unwrap_or(&Value::Null)));
        }
    }
    Ok(Shown {
        now_ms,
        what: Shows::Overview(Box::new(Overview {
            approvals,
            counts,
            live: rows_json(live, now_ms, &halts),
            live_total,
            escalations,
            escalated: escalated.len(),
            due: rows_json(due, now_ms, &halts),
            due_total,
            switches,
            quota,
            tokens: viewer
                .is_none()
                .then(|| TokensView::of(&global, now_ms, None).value()),
        })),
    })
}
