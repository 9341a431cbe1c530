//! What `discuss top` shows, read at one instant: what needs a person
//! (pending approvals, undelivered escalations, turns told to a session
//! and not picked up), the live turns, the halts, counts by status and
//! spend against the caps; all through the operations the CLI uses.

use crate::discussion::{Discussion, Row, Status};
use crate::error::Result;
use crate::global::Switches;
use crate::operations::approvals::Decided;
use crate::session::Session;
use serde_json::Value;

/// `--fleet` and `--agent`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    pub fleet: Option<String>,
    pub agent: Option<String>,
}

pub(crate) struct Snapshot {
    pub now_ms: i64,
    pub approvals: Vec<Decided>,
    /// Escalated and not yet delivered to a person.
    pub escalations: Vec<Discussion>,
    pub rows: Vec<Row>,
    pub switches: Switches,
    /// `quota show --json`.
    pub quota: Value,
}

impl Filter {
    fn admits(&self, fleet: Option<&str>, participants: &[String]) -> bool {
        self.fleet.as_deref().is_none_or(|f| fleet == Some(f))
            && self
                .agent
                .as_deref()
                .is_none_or(|a| participants.iter().any(|p| p == a))
    }

    fn admits_discussion(&self, d: &Discussion) -> bool {
        let root = d.root.as_ref();
        let participants: Vec<String> =
            root.map_or_else(Vec::new, |r| vec![r.asker.clone(), r.peer.clone()]);
        self.admits(root.map(|r| r.fleet_id.as_str()), &participants)
    }
}

impl Snapshot {
    pub(crate) fn read(session: &Session, filter: &Filter) -> Result<Snapshot> {
        let (rows, now_ms) = crate::operations::lists::listed(
            session,
            &[],
            filter.agent.as_deref(),
            filter.fleet.as_deref(),
        )?;
        let rows: Vec<Row> = rows
            .into_iter()
            .filter(|r| filter.admits(r.fleet_id.as_deref(), &r.participants))
            .collect();
        let approvals = crate::operations::approvals::requests(
            session,
            Some(crate::discussion::ApprovalState::Pending),
        )?
        .into_iter()
        .filter(|d| filter.admits_discussion(&d.discussion))
        .collect();
        let (escalated, _) =
            crate::operations::escalations::escalated(session, &Default::default())?;
        let escalations = escalated
            .into_iter()
            .filter(|d| {
                d.escalation
                    .as_ref()
                    .is_some_and(|e| e.delivery.delivered.is_none())
                    && filter.admits_discussion(d)
            })
            .collect();
        let (switches, quota) = if session.ledger.exists()? {
            let view = session.ledger.view(&[])?;
            let global = view.global(now_ms);
            (
                global.switches(),
                crate::output::Render::value(&crate::output::QuotaView::of(&global, now_ms)),
            )
        } else {
            (Switches::default(), Value::Null)
        };
        Ok(Snapshot {
            now_ms,
            approvals,
            escalations,
            rows,
            switches,
            quota,
        })
    }

    /// Discussions by status, in the precedence order.
    pub(crate) fn counts(&self) -> Vec<(Status, usize)> {
        Status::ALL
            .iter()
            .map(|s| (*s, self.rows.iter().filter(|r| r.status == *s).count()))
            .collect()
    }

    /// The live turns, the earliest deadline first.
    pub(crate) fn live(&self) -> Vec<&Row> {
        let mut live: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| r.live_attempt_deadline_ms.is_some_and(|d| self.now_ms < d))
            .collect();
        live.sort_by_key(|r| r.live_attempt_deadline_ms);
        live
    }

    /// Turns told to a session and not picked up.
    pub(crate) fn unpicked(&self) -> Vec<&Row> {
        self.live()
            .into_iter()
            .filter(|r| r.live_attempt_delivery.as_deref() == Some("delivered"))
            .collect()
    }

    /// The halt that covers a row, if any.
    pub(crate) fn halt_of(&self, row: &Row) -> Option<crate::global::Halt> {
        self.switches.halt_of(crate::global::Covered {
            fleet: row.fleet_id.as_deref(),
            agents: [
                row.participants.first().map(String::as_str),
                row.participants.get(1).map(String::as_str),
            ],
            discussion: Some(&row.id),
        })
    }
}
