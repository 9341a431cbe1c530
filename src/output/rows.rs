//! `list` and `inbox`: one row per discussion, as the contract's
//! `{"discussions": [...]}` and as aligned columns for a person.

use super::json_line::JsonObject;
use super::text::{clock_time, relative};
use super::{Sink, Style, View};
use crate::discussion::{Row, Status};
use serde::Serialize;

/// A row as the contract shows it.
#[derive(Serialize)]
struct RowJson<'a> {
    discussion_id: &'a str,
    fleet_id: Option<&'a str>,
    participants: &'a [String],
    status: Status,
    turns_used: u32,
    max_turns: u32,
    head_message_id: Option<&'a str>,
    head_to_agent_id: Option<&'a str>,
    updated_at: super::At,
    escalated: bool,
    live_attempt_id: Option<&'a str>,
    live_attempt_deadline_at: Option<super::At>,
    /// How far the live turn reached a live session (`undelivered`,
    /// `delivered`, `picked_up`), when one was told of it.
    live_attempt_delivery: Option<&'a str>,
    tokens: u64,
    cost_usd: crate::spend::Usd,
    /// The first engaged switch that covers it.
    halted: Option<serde_json::Value>,
    /// An approval request on its head waits for a person.
    awaiting_approval: bool,
}

impl<'a> RowJson<'a> {
    fn of(row: &'a Row, switches: &crate::global::Switches, now_ms: i64) -> RowJson<'a> {
        RowJson {
            discussion_id: &row.id,
            fleet_id: row.fleet_id.as_deref(),
            participants: &row.participants,
            status: row.status,
            turns_used: row.turns_used,
            max_turns: row.max_turns,
            head_message_id: row.head_message_id.as_deref(),
            head_to_agent_id: row.head_to_agent_id.as_deref(),
            updated_at: super::At(row.updated_at_ms),
            escalated: row.escalated,
            live_attempt_id: row.live_attempt_id.as_deref(),
            live_attempt_deadline_at: row.live_attempt_deadline_ms.map(super::At),
            live_attempt_delivery: row.live_attempt_delivery.as_deref(),
            tokens: row.tokens,
            cost_usd: row.cost_usd,
            halted: halt_of(row, switches).map(|h| h.to_json()),
            awaiting_approval: row.approval_expires_ms.is_some_and(|until| now_ms < until),
        }
    }
}

/// The first engaged switch that covers a row's discussion.
fn halt_of(row: &Row, switches: &crate::global::Switches) -> Option<crate::global::Halt> {
    switches.halt_of(crate::global::Covered {
        fleet: row.fleet_id.as_deref(),
        agents: [
            row.participants.first().map(String::as_str),
            row.participants.get(1).map(String::as_str),
        ],
        discussion: Some(&row.id),
    })
}

impl RowJson<'_> {
    /// Its JSON by hand, as serde writes the fields above.
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut o = JsonObject::open(out);
        o.str("discussion_id", self.discussion_id);
        o.opt_str("fleet_id", self.fleet_id);
        o.strs("participants", self.participants);
        o.str("status", self.status.as_str());
        o.uint("turns_used", self.turns_used.into());
        o.uint("max_turns", self.max_turns.into());
        o.opt_str("head_message_id", self.head_message_id);
        o.opt_str("head_to_agent_id", self.head_to_agent_id);
        o.time("updated_at", self.updated_at.0);
        o.bool("escalated", self.escalated);
        o.opt_str("live_attempt_id", self.live_attempt_id);
        o.opt_time(
            "live_attempt_deadline_at",
            self.live_attempt_deadline_at.map(|at| at.0),
        );
        o.opt_str("live_attempt_delivery", self.live_attempt_delivery);
        o.uint("tokens", self.tokens);
        o.usd("cost_usd", self.cost_usd);
        o.value("halted", &self.halted);
        o.bool("awaiting_approval", self.awaiting_approval);
        o.close();
    }
}

/// A summary's row: `Row`'s serde form (times as milliseconds), `null`
/// for none, written by hand as serde writes it. A first list writes one
/// per discussion, and serde's escaping of every byte of it was a
/// twentieth of the thread that derives.
pub(crate) fn summary_row_json(row: Option<&Row>) -> String {
    let Some(row) = row else {
        return "null".into();
    };
    let mut out = Vec::with_capacity(400);
    let mut o = JsonObject::open(&mut out);
    o.str("id", &row.id);
    o.opt_str("fleet_id", row.fleet_id.as_deref());
    o.strs("participants", &row.participants);
    o.str("status", row.status.as_str());
    o.uint("turns_used", row.turns_used.into());
    o.uint("max_turns", row.max_turns.into());
    o.opt_str("head_message_id", row.head_message_id.as_deref());
    o.opt_str("head_to_agent_id", row.head_to_agent_id.as_deref());
    o.int("updated_at_ms", row.updated_at_ms);
    o.bool("escalated", row.escalated);
    o.opt_str("live_attempt_id", row.live_attempt_id.as_deref());
    o.opt_int("live_attempt_deadline_ms", row.live_attempt_deadline_ms);
    o.opt_int("approval_expires_ms", row.approval_expires_ms);
    o.opt_str(
        "live_attempt_delivery",
        row.live_attempt_delivery.as_deref(),
    );
    o.uint("tokens", row.tokens);
    o.usd("cost_usd", row.cost_usd);
    o.close();
    String::from_utf8(out).expect("JSON written from strings is UTF-8")
}

/// Whether `summary_row_json` writes serde's bytes: the fuzz target asks
/// it of every discussion's row.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn summary_row_as_serde(row: Option<&Row>) -> bool {
    serde_json::to_string(&row).ok() == Some(summary_row_json(row))
}

/// The rows of `list` or `inbox`, newest first, derived at `now_ms`.
pub(crate) struct RowsView {
    pub rows: Vec<Row>,
    pub now_ms: i64,
    /// What to say when there are no rows ("no discussions in …").
    pub empty: String,
    /// Every discussion id of the ledger, sorted, when ids are to be
    /// shortened (`needs_known_ids`): a shortened id must stay unique
    /// among them all, not only among the rows shown.
    pub known_ids: Vec<String>,
    /// `inbox`: under the rows, each live turn with the attempt and the
    /// head it must be answered with.
    pub live_turns: bool,
    /// The kill-switches when the rows were read: a covered row is halted.
    pub switches: crate::global::Switches,
}

impl Serialize for RowsView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        // Row by row, as the JSON is written: never a second copy.
        struct Rows<'r>(&'r [Row], &'r crate::global::Switches, i64);
        impl Serialize for Rows<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.iter().map(|row| RowJson::of(row, self.1, self.2)))
            }
        }
        let mut object = serializer.serialize_struct("Rows", 1)?;
        object.serialize_field(
            "discussions",
            &Rows(&self.rows, &self.switches, self.now_ms),
        )?;
        object.end()
    }
}

const HEADERS: [&str; 6] = [
    "discussion",
    "status",
    "participants",
    "turns",
    "next",
    "updated",
];

/// The columns, by their place in `HEADERS`.
const PARTICIPANTS: usize = 2;
const TURNS: usize = 3;
const NEXT: usize = 4;
const UPDATED: usize = 5;

/// One way a list gives up width on a narrow terminal.
#[derive(Clone, Copy)]
enum Shed {
    Drop(usize),
    /// The participants cut down, to no fewer characters than this.
    Shrink(usize),
}

/// `cell` in at most `width` characters: cut with an ellipsis.
fn fit(cell: &str, width: usize) -> std::borrow::Cow<'_, str> {
    if cell.chars().count() <= width {
        return std::borrow::Cow::Borrowed(cell);
    }
    let mut cut: String = cell.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    std::borrow::Cow::Owned(cut)
}

/// A row's cells, uncoloured.
fn cells(d: &Row, now: i64, switches: &crate::global::Switches) -> [String; 6] {
    let mut status = if d.escalated {
        format!("{} (escalated)", d.status.as_str())
    } else {
        d.status.as_str().to_owned()
    };
    // A halt is plain: the discussion cannot move while it lasts.
    if !d.status.is_terminal()
        && let Some(halt) = halt_of(d, switches)
    {
        status.push_str(&match &halt.scope {
            None => " HALTED".to_owned(),
            Some(scope) => format!(" HALTED ({})", scope.kind()),
        });
    }
    [
        d.id.clone(),
        status,
        d.participants.join(" ⇄ "),
        turns_and_spend(d),
        // Nobody is next in a finished discussion.
        if d.status.is_terminal() {
            String::new()
        } else {
            d.head_to_agent_id.clone().unwrap_or_default()
        },
        relative(d.updated_at_ms, now),
    ]
}

/// `2/4`, and what the turns reported they cost when they did:
/// `3/4 · 1500 tok · $0.30`.
fn turns_and_spend(d: &Row) -> String {
    let mut cell = format!("{}/{}", d.turns_used, d.max_turns);
    if d.tokens > 0 {
        cell.push_str(&format!(" · {} tok", d.tokens));
    }
    if d.cost_usd > crate::spend::Usd::ZERO {
        cell.push_str(&format!(" · {}", super::discussion::dollars(d.cost_usd)));
    }
    cell
}

impl RowsView {
    /// Whether, shown in `style`, the lines are wider than the terminal,
    /// so that ids are shortened and the view needs `known_ids`.
    pub(crate) fn needs_known_ids(&self, style: &Style) -> bool {
        style
            .width
            .is_some_and(|limit| line_width(&self.widths()) > limit)
    }

    /// The widths of the columns: a row's cells made and dropped at a
    /// time, so memory holds the rows, not their text.
    fn widths(&self) -> Vec<usize> {
        let mut widths: Vec<usize> = HEADERS.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (width, cell) in widths
                .iter_mut()
                .zip(cells(row, self.now_ms, &self.switches))
            {
                *width = (*width).max(cell.chars().count());
            }
        }
        widths
    }
}

fn line_width(widths: &[usize]) -> usize {
    widths.iter().map(|w| w + 2).sum::<usize>() - 2
}

impl View for RowsView {
    /// Aligned columns, one line a row. Colour is put on after the
    /// padding, so it never changes the layout. On a terminal narrower
    /// than the lines, ids are shortened to the shortest prefix unique
    /// among every discussion of the ledger (commands take a unique
    /// prefix), then `updated` is left out, the participants are cut with
    /// an ellipsis, then `turns` is left out: `next` (whom to wake) stays
    /// as long as anything does, and a last line names what was left out.
    /// In a pipe or a file nothing is cut.
    fn human(&self, style: &Style, out: &mut Sink) {
        if self.rows.is_empty() {
            out.text(&format!("{}\n", self.empty));
            return;
        }
        // Two passes over the rows: the widths, then the lines.
        let mut widths = self.widths();
        let mut id_length = None;
        let mut shown: Vec<usize> = (0..HEADERS.len()).collect();
        let width_of = |shown: &[usize], widths: &[usize]| {
            line_width(&shown.iter().map(|&i| widths[i]).collect::<Vec<_>>())
        };
        if let Some(limit) = style.width {
            if line_width(&widths) > limit {
                // Unique among every discussion of the ledger, not only the
                // rows shown: the prefix must name its discussion when
                // pasted.
                let keep =
                    unique_prefix_length(&self.known_ids, self.rows.iter().map(|r| r.id.as_str()));
                let longest = self.rows.iter().map(|r| r.id.chars().count()).max();
                widths[0] = keep.min(longest.unwrap_or(keep)).max(HEADERS[0].len());
                id_length = Some(keep);
            }
            // Least needed first; the participants shrink before `turns`
            // goes, and down to a few characters before they go.
            for step in [
                Shed::Drop(UPDATED),
                Shed::Shrink(16),
                Shed::Drop(TURNS),
                Shed::Shrink(8),
                Shed::Drop(PARTICIPANTS),
                Shed::Drop(NEXT),
            ] {
                let over = width_of(&shown, &widths).saturating_sub(limit);
                if over == 0 {
                    break;
                }
                match step {
                    Shed::Drop(column) => shown.retain(|&i| i != column),
                    Shed::Shrink(least) => {
                        let wanted = widths[PARTICIPANTS].saturating_sub(over);
                        widths[PARTICIPANTS] = widths[PARTICIPANTS]
                            .min(wanted.max(least).max(HEADERS[PARTICIPANTS].len()));
                    }
                }
            }
        }
        let line = |cells: &[String], status: Option<Status>| {
            let mut text = String::new();
            for (n, &i) in shown.iter().enumerate() {
                let width = widths[i];
                let cell = fit(&cells[i], width);
                match (i, status) {
                    (1, Some(status)) => {
                        text.push_str(&cell.replacen(status.as_str(), &style.status(status), 1))
                    }
                    _ => text.push_str(&cell),
                }
                if n + 1 < shown.len() {
                    text.push_str(&" ".repeat(width.saturating_sub(cell.chars().count()) + 2));
                }
            }
            // An empty last cell leaves no padding behind.
            text.truncate(text.trim_end_matches(' ').len());
            text.push('\n');
            text
        };
        out.text(&line(&HEADERS.map(str::to_owned), None));
        for row in &self.rows {
            let mut cells = cells(row, self.now_ms, &self.switches);
            if let Some(keep) = id_length {
                cells[0] = row.id.chars().take(keep).collect();
            }
            out.text(&line(&cells, Some(row.status)));
        }
        if self.live_turns {
            for row in &self.rows {
                let (Some(attempt), Some(deadline), Some(head)) = (
                    &row.live_attempt_id,
                    row.live_attempt_deadline_ms,
                    &row.head_message_id,
                ) else {
                    continue;
                };
                let delivery = match row.live_attempt_delivery.as_deref() {
                    Some("undelivered") => "; its session is not told yet",
                    Some("delivered") => "; told its session, not picked up",
                    Some("picked_up") => "; picked up",
                    _ => "",
                };
                let line = format!(
                    "live turn of {} in {}: --attempt {attempt} --reply-to {head}, until {} ({}){delivery}",
                    row.head_to_agent_id.as_deref().unwrap_or("?"),
                    row.id,
                    clock_time(deadline),
                    relative(deadline, self.now_ms)
                );
                for wrapped in super::text::wrap(&line, style.width) {
                    out.text(&format!("{wrapped}\n"));
                }
            }
        }
        let left_out: Vec<&str> = (0..HEADERS.len())
            .filter(|i| !shown.contains(i))
            .map(|i| HEADERS[i])
            .collect();
        if !left_out.is_empty() {
            let note = format!(
                "(left out at this width: {}; a wider terminal or --json shows them)",
                left_out.join(", ")
            );
            for wrapped in super::text::wrap(&note, style.width) {
                out.text(&format!("{wrapped}\n"));
            }
        }
    }

    fn ids(&self) -> Vec<&str> {
        self.rows.iter().map(|r| r.id.as_str()).collect()
    }

    /// Row by row, each handed on as the blocks fill: serde_json's
    /// escaping of every byte of every string and key was half of a
    /// list's printing.
    fn json_by_hand(&self, out: &mut Sink) -> bool {
        out.by_hand().extend_from_slice(b"{\"discussions\":[");
        for (i, row) in self.rows.iter().enumerate() {
            let json = out.by_hand();
            if i > 0 {
                json.push(b',');
            }
            RowJson::of(row, &self.switches, self.now_ms).write_json(json);
            if !out.hand_on_when_full() {
                // A failed write: the rest would go nowhere.
                return true;
            }
        }
        out.by_hand().extend_from_slice(b"]}");
        true
    }
}

/// Whether the rows' JSON written by hand is serde's, byte for byte: the
/// fuzz target asks it of every discussion's row at every instant.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn rows_by_hand_as_serde(rows: Vec<Row>) -> bool {
    let view = RowsView {
        rows,
        now_ms: 0,
        empty: String::new(),
        known_ids: Vec::new(),
        live_turns: false,
        switches: Default::default(),
    };
    let mut by_hand = Vec::new();
    let mut sink = Sink::new(&mut by_hand);
    let written = view.json_by_hand(&mut sink);
    let finished = sink.finish().is_ok();
    written && finished && serde_json::to_vec(&view).ok() == Some(by_hand)
}

/// How many characters of each of `ids` tell it apart from every other id
/// of `all` (sorted): at least `dsc_` and eight more, the shortest prefix a
/// command resolves.
fn unique_prefix_length<'a>(all: &[String], ids: impl Iterator<Item = &'a str>) -> usize {
    let shared = |a: &str, b: &str| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    ids.map(|id| {
        let at = all.partition_point(|other| other.as_str() < id);
        let before = at.checked_sub(1).map(|i| all[i].as_str());
        let after = all[at..]
            .iter()
            .map(String::as_str)
            .find(|other| *other != id);
        [before, after]
            .into_iter()
            .flatten()
            .map(|other| shared(id, other) + 1)
            .max()
            .unwrap_or(0)
    })
    .max()
    .unwrap_or(0)
    .max(12)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spend::Usd;

    /// Rows with every field set and none, strings with something to
    /// escape, spend whole and in a fraction, no rows at all: by hand,
    /// serde's bytes.
    #[test]
    fn rows_by_hand_are_serdes() {
        let full = Row {
            id: "dsc_\"1\"\\".into(),
            fleet_id: Some("fleet\n-a".into()),
            participants: vec!["agent-a".into(), "agent-é\u{1}".into()],
            status: Status::Active,
            turns_used: 2,
            max_turns: 4,
            head_message_id: Some("msg_1".into()),
            head_to_agent_id: Some("agent-a".into()),
            updated_at_ms: 1_792_541_008_703,
            escalated: true,
            live_attempt_id: Some("att_1".into()),
            live_attempt_deadline_ms: Some(1_792_541_068_703),
            approval_expires_ms: Some(1_792_541_068_800),
            live_attempt_delivery: Some("delivered".into()),
            tokens: 1500,
            cost_usd: Usd::from_nanos(250_000_001),
        };
        let bare = Row {
            fleet_id: None,
            participants: Vec::new(),
            status: Status::Invalid,
            head_message_id: None,
            head_to_agent_id: None,
            escalated: false,
            live_attempt_id: None,
            live_attempt_deadline_ms: None,
            approval_expires_ms: None,
            live_attempt_delivery: None,
            updated_at_ms: -62_135_596_800_001,
            tokens: u64::MAX,
            cost_usd: Usd::from_nanos(3_000_000_000),
            ..full.clone()
        };
        let huge = Row {
            cost_usd: Usd::from_nanos(u64::MAX),
            ..bare.clone()
        };
        assert!(rows_by_hand_as_serde(Vec::new()));
        assert!(rows_by_hand_as_serde(vec![full.clone()]));
        assert!(rows_by_hand_as_serde(vec![
            bare.clone(),
            full.clone(),
            bare.clone(),
            huge.clone()
        ]));
        // A summary's row, with times of either sign and none.
        let past = Row {
            updated_at_ms: 0,
            live_attempt_deadline_ms: Some(-1),
            approval_expires_ms: Some(-2),
            ..full.clone()
        };
        for row in [None, Some(&full), Some(&bare), Some(&huge), Some(&past)] {
            assert!(summary_row_as_serde(row), "{row:?}");
        }
        assert_eq!(
            summary_row_json(Some(&bare)),
            serde_json::to_string(&bare).unwrap()
        );
    }
}
