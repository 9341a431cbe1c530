//! `discuss top`: the operator's terminal. What needs a person first, then
//! the live turns, halts, counts and spend; Enter opens a discussion; keys
//! halt, release, grant and deny as the console's buttons do (every key is
//! on screen). It reads the ledger again when it changes (looked at every
//! 200 ms) and every second (time moves statuses), and writes only when a
//! key asks. The terminal is restored on every way out: q, Ctrl-C,
//! SIGTERM or SIGHUP, and a panic (ratatui's hook).

mod draw;
pub(crate) mod snapshot;

use crate::error::{Error, Result};
use crate::record::Scope;
use crate::session::Session;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use snapshot::{Filter, Snapshot};
use std::time::{Duration, Instant};

/// How often keys and the ledger's version are looked at.
const TICK: Duration = Duration::from_millis(200);
/// The longest a screen stays unread when the ledger does not change.
const REREAD: Duration = Duration::from_secs(1);

/// One thing that can be selected: what it is about.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    Approval {
        approval_id: String,
        discussion_id: String,
    },
    Escalation(String),
    Discussion(String),
}

impl Item {
    fn discussion_id(&self) -> &str {
        match self {
            Item::Approval { discussion_id, .. } => discussion_id,
            Item::Escalation(id) | Item::Discussion(id) => id,
        }
    }
}

/// What the keys do now.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Mode {
    Browse,
    /// A discussion opened with Enter.
    Open(String),
    /// `h`: which scope to halt.
    HaltScope,
    /// A reason being typed for a halt of `scope` (`None`: everything).
    HaltReason(Option<Scope>, String),
    /// A reason being typed to deny `approval_id`.
    DenyReason(String, String),
}

pub(crate) struct State {
    pub snapshot: Snapshot,
    pub items: Vec<Item>,
    pub selected: usize,
    pub mode: Mode,
    /// What the last key did, or why it did not.
    pub said: Option<(bool, String)>,
    pub color: bool,
    pub ledger: String,
    pub filter: Filter,
    /// The opened discussion, read when it was opened (and again with
    /// each reading).
    pub opened: Option<crate::discussion::Discussion>,
}

impl State {
    fn items_of(snapshot: &Snapshot) -> Vec<Item> {
        let mut items: Vec<Item> = snapshot
            .approvals
            .iter()
            .map(|d| Item::Approval {
                approval_id: d.approval.approval_id.clone(),
                discussion_id: d.discussion.id.clone(),
            })
            .collect();
        items.extend(
            snapshot
                .escalations
                .iter()
                .map(|d| Item::Escalation(d.id.clone())),
        );
        items.extend(snapshot.rows.iter().map(|r| Item::Discussion(r.id.clone())));
        items
    }

    fn read(&mut self, session: &Session) -> Result<()> {
        let chosen = self.items.get(self.selected).cloned();
        self.snapshot = Snapshot::read(session, &self.filter)?;
        self.items = State::items_of(&self.snapshot);
        self.selected = chosen
            .and_then(|c| self.items.iter().position(|i| *i == c))
            .unwrap_or(self.selected)
            .min(self.items.len().saturating_sub(1));
        if let Mode::Open(id) = &self.mode {
            self.opened = crate::operations::read::load(session, id)
                .ok()
                .map(|(d, _)| d);
        }
        Ok(())
    }

    fn selected_item(&self) -> Option<&Item> {
        self.items.get(self.selected)
    }
}

/// Runs the view until a way out; the terminal as it was afterwards.
pub(crate) fn run(session: &Session, filter: Filter, color: bool) -> Result<()> {
    crate::supervisor::catch_stop_signals()?;
    let snapshot = Snapshot::read(session, &filter)?;
    let mut state = State {
        items: State::items_of(&snapshot),
        snapshot,
        selected: 0,
        mode: Mode::Browse,
        said: None,
        color,
        ledger: session.ledger.location(),
        filter,
        opened: None,
    };
    let mut terminal = ratatui::try_init().map_err(|e| Error::io("the terminal", &e))?;
    let outcome = (|| -> Result<()> {
        let mut seen = (session.ledger.version(), Instant::now());
        loop {
            let _ = crate::ledger::failpoint("top.draw");
            terminal
                .draw(|frame| draw::draw(frame, &state))
                .map_err(|e| Error::io("the terminal", &e))?;
            if crate::supervisor::stop_requested() {
                return Ok(());
            }
            let Some(ready) = input_within(TICK)? else {
                // The terminal hung up (its window closed, its server
                // killed): nobody is left to see the view.
                return Ok(());
            };
            if ready && event::poll(Duration::ZERO).map_err(|e| Error::io("the terminal", &e))? {
                if let Event::Key(key) = event::read().map_err(|e| Error::io("the terminal", &e))?
                    && key.kind != KeyEventKind::Release
                {
                    let ctrl_c = key.modifiers.contains(KeyModifiers::CONTROL)
                        && key.code == KeyCode::Char('c');
                    if ctrl_c || (key.code == KeyCode::Char('q') && state.mode == Mode::Browse) {
                        return Ok(());
                    }
                    if on_key(session, &mut state, key.code) {
                        state.read(session)?;
                        seen = (session.ledger.version(), Instant::now());
                    }
                }
                continue;
            }
            let version = session.ledger.version();
            if version != seen.0 || seen.1.elapsed() >= REREAD {
                state.read(session)?;
                seen = (version, Instant::now());
            }
        }
    })();
    ratatui::restore();
    outcome
}

/// Whether input came on stdin within `wait`; `None` when the terminal
/// hung up. (crossterm's own wait spins on a hung-up terminal, which
/// reads as an endless end of file, and never comes back.)
fn input_within(wait: Duration) -> Result<Option<bool>> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
    let timeout = Timespec {
        tv_sec: 0,
        tv_nsec: wait.as_nanos().min(999_999_999) as _,
    };
    match poll(&mut fds, Some(&timeout)) {
        Ok(_) => {}
        Err(rustix::io::Errno::INTR) => return Ok(Some(false)),
        Err(e) => return Err(Error::io("the terminal", &e.into())),
    }
    let seen = fds[0].revents();
    if seen.intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL) {
        return Ok(None);
    }
    Ok(Some(seen.contains(PollFlags::IN)))
}

/// What a key does; whether the screen must be read again (a write).
fn on_key(session: &Session, state: &mut State, key: KeyCode) -> bool {
    match (&state.mode.clone(), key) {
        (Mode::Browse, KeyCode::Up | KeyCode::Char('k')) => {
            state.selected = state.selected.saturating_sub(1);
            false
        }
        (Mode::Browse, KeyCode::Down | KeyCode::Char('j')) => {
            state.selected = (state.selected + 1).min(state.items.len().saturating_sub(1));
            false
        }
        (Mode::Browse, KeyCode::Enter) => {
            if let Some(item) = state.selected_item() {
                let id = item.discussion_id().to_owned();
                state.opened = crate::operations::read::load(session, &id)
                    .ok()
                    .map(|(d, _)| d);
                state.mode = Mode::Open(id);
            }
            false
        }
        (Mode::Open(_), KeyCode::Esc | KeyCode::Backspace | KeyCode::Char('q')) => {
            state.mode = Mode::Browse;
            false
        }
        (Mode::Browse | Mode::Open(_), KeyCode::Char('h')) => {
            state.mode = Mode::HaltScope;
            false
        }
        (Mode::HaltScope, KeyCode::Char(c @ ('d' | 'f' | 'a' | 'e'))) => {
            let row = state.selected_item().and_then(|i| {
                state
                    .snapshot
                    .rows
                    .iter()
                    .find(|r| r.id == i.discussion_id())
            });
            let scope = match (c, row) {
                ('e', _) => Some(None),
                ('d', Some(r)) => Some(Some(Scope::Discussion(r.id.clone()))),
                ('f', Some(r)) => r.fleet_id.clone().map(|f| Some(Scope::Fleet(f))),
                ('a', Some(r)) => r.head_to_agent_id.clone().map(|a| Some(Scope::Agent(a))),
                _ => None,
            };
            state.mode = match scope {
                Some(scope) => Mode::HaltReason(scope, String::new()),
                None => {
                    state.said = Some((false, "select a discussion first".into()));
                    Mode::Browse
                }
            };
            false
        }
        (Mode::HaltReason(scope, reason), KeyCode::Enter) => {
            let done = crate::operations::admin::set_kill_switch(
                session,
                true,
                Some(reason.clone()),
                scope.clone(),
            );
            state.said = Some(said(done.map(|_| format!("halted {}", scope_text(scope)))));
            state.mode = Mode::Browse;
            true
        }
        (Mode::DenyReason(id, reason), KeyCode::Enter) => {
            let done =
                crate::operations::approvals::decide(session, id, false, Some(reason.clone()));
            state.said = Some(said(done.map(|_| format!("denied {id}"))));
            state.mode = Mode::Browse;
            true
        }
        (Mode::HaltReason(_, text) | Mode::DenyReason(_, text), KeyCode::Char(c)) => {
            let mut text = text.clone();
            text.push(c);
            state.mode = match state.mode.clone() {
                Mode::HaltReason(scope, _) => Mode::HaltReason(scope, text),
                Mode::DenyReason(id, _) => Mode::DenyReason(id, text),
                other => other,
            };
            false
        }
        (Mode::HaltReason(_, text) | Mode::DenyReason(_, text), KeyCode::Backspace) => {
            let mut text = text.clone();
            text.pop();
            state.mode = match state.mode.clone() {
                Mode::HaltReason(scope, _) => Mode::HaltReason(scope, text),
                Mode::DenyReason(id, _) => Mode::DenyReason(id, text),
                other => other,
            };
            false
        }
        (Mode::HaltScope | Mode::HaltReason(..) | Mode::DenyReason(..), KeyCode::Esc) => {
            state.mode = Mode::Browse;
            false
        }
        (Mode::Browse | Mode::Open(_), KeyCode::Char('r')) => {
            let halt = match state.selected_item() {
                Some(item) => state
                    .snapshot
                    .rows
                    .iter()
                    .find(|r| r.id == item.discussion_id())
                    .and_then(|r| state.snapshot.halt_of(r)),
                None => None,
            }
            .or_else(|| {
                state
                    .snapshot
                    .switches
                    .global
                    .engaged
                    .then_some(crate::global::Halt {
                        scope: None,
                        state: state.snapshot.switches.global.clone(),
                    })
            });
            let Some(halt) = halt else {
                state.said = Some((false, "no halt covers the selected discussion".into()));
                return false;
            };
            let done =
                crate::operations::admin::set_kill_switch(session, false, None, halt.scope.clone());
            state.said = Some(said(
                done.map(|_| format!("released {}", scope_text(&halt.scope))),
            ));
            true
        }
        (Mode::Browse | Mode::Open(_), KeyCode::Char('g')) => match state.selected_item() {
            Some(Item::Approval { approval_id, .. }) => {
                let id = approval_id.clone();
                let done = crate::operations::approvals::decide(session, &id, true, None);
                state.said = Some(said(done.map(|_| format!("granted {id}"))));
                true
            }
            _ => {
                state.said = Some((false, "select an approval request to grant".into()));
                false
            }
        },
        (Mode::Browse | Mode::Open(_), KeyCode::Char('d')) => match state.selected_item() {
            Some(Item::Approval { approval_id, .. }) => {
                state.mode = Mode::DenyReason(approval_id.clone(), String::new());
                false
            }
            _ => {
                state.said = Some((false, "select an approval request to deny".into()));
                false
            }
        },
        _ => false,
    }
}

fn said<T>(done: Result<T>) -> (bool, String)
where
    T: Into<String>,
{
    match done {
        Ok(text) => (true, text.into()),
        Err(err) => (false, format!("{}: {}", err.code, err.message)),
    }
}

pub(crate) fn scope_text(scope: &Option<Scope>) -> String {
    match scope {
        None => "everything".into(),
        Some(scope) => format!("{} {}", scope.kind(), scope.id()),
    }
}

/// `usage` (exit 2) without a terminal on stdin and stdout.
pub(crate) fn needs_terminal() -> Error {
    Error::usage(
        "discuss top needs a terminal on stdin and stdout".to_owned(),
        "discuss top [--fleet F] [--agent A]".into(),
    )
    .hint("in a script or a pipe: `discuss list` for a snapshot, `discuss events --follow` for a stream")
}
