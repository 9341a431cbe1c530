//! `GET /v1/search?q=&fleet=&agent=&status=&limit=`: `search --json`; an
//! agent token finds only the discussions it takes part in.

use super::app::App;
use super::http::{error_response, json_response, query_pairs, single};
use crate::credentials::Principal;
use crate::error::Result;
use crate::output::Render;
use crate::search::run::{SearchRequest, missing_text, search};
use crate::search::view::SearchView;
use axum::extract::State;
use axum::http::Uri;
use axum::response::Response;

/// The request a query string makes, for `principal`.
pub(super) fn request_of(query: Option<&str>, principal: &Principal) -> Result<SearchRequest> {
    let pairs = query_pairs(query, &["q", "fleet", "agent", "status", "limit"])?;
    let text = single(&pairs, "q")?.ok_or_else(missing_text)?;
    let limit = match single(&pairs, "limit")? {
        None => None,
        Some(limit) => Some(limit.parse::<i64>().map_err(|_| {
            crate::error::Error::new(
                crate::error::ErrorCode::InvalidArgument,
                format!("limit is a number from 1 to 1000, not {limit:?}"),
            )
            .detail("field", "limit")
        })?),
    };
    let statuses: Vec<String> = pairs
        .iter()
        .filter(|(k, _)| k == "status")
        .map(|(_, v)| v.clone())
        .collect();
    let mut request = SearchRequest::new(
        text,
        single(&pairs, "fleet")?.map(str::to_owned),
        single(&pairs, "agent")?.map(str::to_owned),
        &statuses,
        limit,
    )?;
    if !principal.is_operator() {
        request.reader = principal.acting_agent().map(str::to_owned);
    }
    Ok(request)
}

pub(super) async fn find(
    State(app): State<App>,
    axum::Extension(principal): axum::Extension<Principal>,
    uri: Uri,
) -> Response {
    let request = match request_of(uri.query(), &principal) {
        Ok(request) => request,
        Err(err) => return error_response(&err),
    };
    let answered = app
        .blocking(move |session| {
            crate::session::as_principal(session, &principal, false, || {
                let (found, now_ms) = search(session, &request)?;
                Ok(SearchView { found, now_ms }.value())
            })
        })
        .await;
    match answered {
        Ok(answer) => json_response(&answer),
        Err(err) => error_response(&err),
    }
}
