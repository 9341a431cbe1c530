//! `/search?q=`: the console's search box, answered as `discuss search`
//! answers (an agent's own discussions only), each match a link to its
//! discussion.

use super::pages::{layout, short, time};
use super::{App, error_page, html, viewed};
use crate::credentials::Principal;
use crate::search::run::Found;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use maud::{Markup, html};

pub(super) async fn page(State(app): State<App>, headers: HeaderMap, uri: Uri) -> Response {
    let shown = app.clone();
    viewed(&app, &headers, move |principal| async move {
        let text = super::query_pairs(uri.query(), &["q", "fleet", "agent", "status", "limit"])
            .ok()
            .and_then(|pairs| super::single(&pairs, "q").ok().flatten().map(str::to_owned))
            .unwrap_or_default();
        // The box alone until something is asked.
        if text.trim().is_empty() {
            return html(StatusCode::OK, matches(&principal, "", &[], 0));
        }
        let request = match crate::serve::search::request_of(uri.query(), &principal) {
            Ok(request) => request,
            Err(err) => return error_page(&err, Some(&principal)),
        };
        let found = shown
            .blocking(move |session| crate::search::run::search(session, &request))
            .await;
        match found {
            Ok((found, now)) => html(StatusCode::OK, matches(&principal, &text, &found, now)),
            Err(err) => error_page(&err, Some(&principal)),
        }
    })
    .await
}

fn matches(principal: &Principal, text: &str, found: &[Found], now: i64) -> Markup {
    layout(
        "Search",
        Some(principal),
        now,
        None,
        html! {
            main #main {
                h1 { "Search" }
                form.filters method="get" action="/search" role="search" {
                    label { "Words, or \"a phrase\" " input type="search" name="q" value=(text) autofocus; }
                    button type="submit" { "Search" }
                }
                @if !text.trim().is_empty() {
                    @if found.is_empty() { p.quiet { "No message holds every word of the search." } }
                    ol.matches {
                        @for f in found {
                            li data-discussion-id=(f.discussion_id) data-message-id=(f.message_id) {
                                p {
                                    a.id href={ "/discussions/" (f.discussion_id) } title=(f.discussion_id) { (short(&f.discussion_id)) }
                                    " turn " (f.turn) " · " (f.from_agent_id) " · " (time(&crate::clock::format_ms(f.at_ms), now))
                                }
                                p.snippet { (f.snippet) }
                            }
                        }
                    }
                }
            }
        },
    )
}
