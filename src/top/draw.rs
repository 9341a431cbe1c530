//! `discuss top`'s screen: one frame drawn from the state, fitting 80×24
//! and larger; with colour unless `NO_COLOR` (or `--color never`).

use super::{Item, Mode, State, scope_text};
use crate::clock::format_ms;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

/// Seconds (or minutes) left until `at`.
fn left(at: i64, now: i64) -> String {
    let s = (at - now).max(0) / 1000;
    if s < 60 {
        format!("{s} s left")
    } else {
        format!("{} min {} s left", s / 60, s % 60)
    }
}

fn short(id: &str) -> String {
    if id.len() <= 16 {
        return id.to_owned();
    }
    format!("{}…{}", &id[..8], &id[id.len() - 6..])
}

struct Paint {
    color: bool,
}

impl Paint {
    fn style(&self, color: Color) -> Style {
        if self.color {
            Style::default().fg(color)
        } else {
            Style::default()
        }
    }
    fn bold(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }
    fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
}

pub(super) fn draw(frame: &mut Frame, state: &State) {
    let paint = Paint { color: state.color };
    let [head, body, said, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(5),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    let scope = match (&state.filter.fleet, &state.filter.agent) {
        (Some(f), _) => format!(" · fleet {f}"),
        (None, Some(a)) => format!(" · agent {a}"),
        _ => String::new(),
    };
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled("discuss top", paint.bold()),
            Span::raw(format!(
                " · {}{scope} · {}",
                state.ledger,
                format_ms(state.snapshot.now_ms)
            )),
        ])),
        head,
    );
    match &state.mode {
        Mode::Open(_) => opened(frame, state, &paint, body),
        _ => overview(frame, state, &paint, body),
    }
    let said_line = match (&state.mode, &state.said) {
        (Mode::HaltScope, _) => {
            Line::from("Halt: d discussion · f its fleet · a its agent · e everything · Esc")
        }
        (Mode::HaltReason(scope, text), _) => Line::from(format!(
            "Halt {} because: {text}▏ (Enter to halt, Esc to leave)",
            scope_text(scope)
        )),
        (Mode::DenyReason(id, text), _) => Line::from(format!(
            "Deny {} because: {text}▏ (Enter to deny, Esc to leave)",
            short(id)
        )),
        (_, Some((ok, text))) => Line::from(Span::styled(
            text.clone(),
            paint.style(if *ok { Color::Green } else { Color::Red }),
        )),
        _ => Line::from(""),
    };
    frame.render_widget(Paragraph::new(said_line), said);
    let keys_line = match state.mode {
        Mode::Open(_) => "Esc back · h halt · r release · g grant · d deny · q back",
        _ => "↑↓ select · Enter open · h halt · r release · g grant · d deny · q quit",
    };
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(keys_line, paint.bold()))),
        keys,
    );
}

fn overview(frame: &mut Frame, state: &State, paint: &Paint, area: Rect) {
    let s = &state.snapshot;
    let now = s.now_ms;
    let mut lines: Vec<Line> = Vec::new();
    let mark = |i: usize| i == state.selected;
    // What needs a person first.
    let unpicked = s.unpicked();
    let needs = s.approvals.len() + s.escalations.len() + unpicked.len();
    lines.push(Line::from(Span::styled(
        format!("Needs a person ({needs})"),
        paint.bold(),
    )));
    if needs == 0 {
        lines.push(Line::from("  nothing waits for a person"));
    }
    for (i, item) in state.items.iter().enumerate() {
        let line = match item {
            Item::Approval { approval_id, .. } => {
                let Some(d) = s
                    .approvals
                    .iter()
                    .find(|d| d.approval.approval_id == *approval_id)
                else {
                    continue;
                };
                let a = &d.approval;
                Line::from(vec![
                    Span::styled("  APPROVAL ", paint.style(Color::Yellow)),
                    Span::raw(format!(
                        "turn {} of {} in {} · {}",
                        a.turn,
                        a.agent_id,
                        short(&d.discussion.id),
                        left(a.expires_ms, now)
                    )),
                ])
            }
            Item::Escalation(id) => {
                let reason = s
                    .escalations
                    .iter()
                    .find(|d| d.id == *id)
                    .and_then(|d| d.escalation.as_ref())
                    .map(|e| e.reason.clone())
                    .unwrap_or_default();
                Line::from(vec![
                    Span::styled("  ESCALATED ", paint.style(Color::Red)),
                    Span::raw(format!("{} ({reason}) · no person told yet", short(id))),
                ])
            }
            Item::Discussion(_) => continue,
        };
        lines.push(if mark(i) {
            line.style(paint.selected())
        } else {
            line
        });
    }
    for row in &unpicked {
        lines.push(Line::from(vec![
            Span::styled("  NOT PICKED UP ", paint.style(Color::Yellow)),
            Span::raw(format!(
                "{} · {} was told, {}",
                short(&row.id),
                row.head_to_agent_id.as_deref().unwrap_or("?"),
                left(row.live_attempt_deadline_ms.unwrap_or(now), now)
            )),
        ]));
    }
    // Live turns, halts, counts and spend.
    let live = s.live();
    lines.push(Line::from(Span::styled(
        format!("Live turns ({})", live.len()),
        paint.bold(),
    )));
    for row in live.iter().take(5) {
        lines.push(Line::from(format!(
            "  {} · {} · {}",
            short(&row.id),
            row.head_to_agent_id.as_deref().unwrap_or("?"),
            left(row.live_attempt_deadline_ms.unwrap_or(now), now)
        )));
    }
    let mut halts: Vec<String> = Vec::new();
    if s.switches.global.engaged {
        halts.push(format!(
            "everything: {}",
            s.switches.global.reason.clone().unwrap_or_default()
        ));
    }
    for scoped in &s.switches.scoped {
        if scoped.state.engaged {
            halts.push(format!(
                "{} {}: {}",
                scoped.scope.kind(),
                scoped.scope.id(),
                scoped.state.reason.clone().unwrap_or_default()
            ));
        }
    }
    lines.push(Line::from(Span::styled(
        format!("Halts ({})", halts.len()),
        paint.bold(),
    )));
    if halts.is_empty() {
        lines.push(Line::from("  no switch is engaged"));
    }
    for halt in &halts {
        lines.push(Line::from(Span::styled(
            format!("  HALTED {halt}"),
            paint.style(Color::Red),
        )));
    }
    let counts: Vec<String> = s
        .counts()
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(status, n)| format!("{} {n}", status.as_str()))
        .collect();
    lines.push(Line::from(vec![
        Span::styled("Discussions ", paint.bold()),
        Span::raw(if counts.is_empty() {
            "none".to_owned()
        } else {
            counts.join(" · ")
        }),
    ]));
    if let Some(agents) = s.quota.get("agents").and_then(|a| a.as_array()) {
        let spend: Vec<String> = agents
            .iter()
            .take(4)
            .map(|a| {
                format!(
                    "{} {} wakes/{}",
                    a["agent_id"].as_str().unwrap_or("?"),
                    a["wakes_in_window"],
                    a["wakes_per_hour"]
                )
            })
            .collect();
        if !spend.is_empty() {
            lines.push(Line::from(vec![
                Span::styled("Spend ", paint.bold()),
                Span::raw(spend.join(" · ")),
            ]));
        }
    }
    // Every discussion, newest first: selectable.
    for (i, item) in state.items.iter().enumerate() {
        let Item::Discussion(id) = item else { continue };
        let Some(row) = s.rows.iter().find(|r| r.id == *id) else {
            continue;
        };
        let halted = s.halt_of(row).map(|_| " HALTED").unwrap_or("");
        let line = Line::from(format!(
            "  {} {:<9} {}/{} {}{halted}",
            short(&row.id),
            row.status.as_str(),
            row.turns_used,
            row.max_turns,
            row.participants.join(" ⇄ ")
        ));
        lines.push(if mark(i) {
            line.style(paint.selected())
        } else {
            line
        });
    }
    // Keep the selection on screen.
    let height = area.height.saturating_sub(0) as usize;
    let chosen_line = lines
        .iter()
        .position(|l| l.style.add_modifier.contains(Modifier::REVERSED))
        .unwrap_or(0);
    let scroll = chosen_line.saturating_sub(height.saturating_sub(2));
    frame.render_widget(Paragraph::new(lines).scroll((scroll as u16, 0)), area);
}

fn opened(frame: &mut Frame, state: &State, paint: &Paint, area: Rect) {
    let Some(d) = &state.opened else {
        frame.render_widget(Paragraph::new("the discussion could not be read"), area);
        return;
    };
    let now = state.snapshot.now_ms;
    let mut lines: Vec<Line> = vec![Line::from(vec![
        Span::styled(d.id.clone(), paint.bold()),
        Span::raw(format!(
            " · {} · turn {} of {}",
            d.status.as_str(),
            d.turns_used,
            d.max_turns()
        )),
    ])];
    lines.push(Line::from(Span::styled("Transcript", paint.bold())));
    for m in &d.transcript {
        let body = crate::search::body_text(&m.body).replace('\n', " ");
        lines.push(Line::from(format!(
            "  {} {} → {} ({}): {}",
            m.turn,
            m.from_agent_id,
            m.to_agent_id,
            m.kind.as_str(),
            crate::escape::printable(&body, false)
        )));
    }
    lines.push(Line::from(Span::styled("Attempts", paint.bold())));
    for a in &d.attempts {
        let live = matches!(
            a.state,
            crate::discussion::AttemptState::Reserved | crate::discussion::AttemptState::Started
        );
        lines.push(Line::from(format!(
            "  turn {} · {} · {}{}{}",
            a.turn,
            a.agent_id,
            a.state.as_str(),
            a.reason
                .as_ref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default(),
            if live {
                format!(" · {}", left(a.deadline_ms, now))
            } else {
                String::new()
            }
        )));
    }
    frame.render_widget(
        Paragraph::new(lines)
            .block(Block::default())
            .wrap(Wrap { trim: false }),
        area,
    );
}
