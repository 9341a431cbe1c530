//! `GET /v1/approvals?state=pending` and `POST /v1/approvals/{id}
//! {"decision":"grant"|"deny","reason"}`: operator tokens only (an agent
//! token is 403 and learns nothing; the decision's record carries the
//! deciding token's id).

use super::app::App;
use super::http::{error_response, json_response, query_pairs, single};
use super::operator::{fields_of, operator_only, operator_write, typed};
use crate::credentials::Principal;
use crate::error::{Error, ErrorCode};
use crate::output::{ApprovalsView, DecidedView, Render};
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use serde_json::Value;

pub(super) async fn list(
    State(app): State<App>,
    axum::Extension(principal): axum::Extension<Principal>,
    uri: Uri,
) -> Response {
    if let Err(err) = operator_only(&principal) {
        return error_response(&err);
    }
    let state = (|| {
        let pairs = query_pairs(uri.query(), &["state"])?;
        crate::operations::approvals::parse_state(single(&pairs, "state")?.unwrap_or("pending"))
    })();
    let state = match state {
        Ok(state) => state,
        Err(err) => return error_response(&err),
    };
    let answered = app
        .blocking(move |session| {
            crate::session::as_principal(session, &principal, false, || {
                let requests = crate::operations::approvals::requests(session, state)?;
                Ok(ApprovalsView(requests).value())
            })
        })
        .await;
    match answered {
        Ok(answer) => json_response(&answer),
        Err(err) => error_response(&err),
    }
}

pub(super) async fn decide(
    State(app): State<App>,
    Path(approval_id): Path<String>,
    axum::Extension(principal): axum::Extension<Principal>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    operator_write(app, principal, headers, body, move |session, request| {
        fields_of(&request, &["decision", "reason"])?;
        let decision = typed(
            &request,
            "decision",
            "\"grant\" or \"deny\"",
            |v: &Value| match v.as_str()? {
                "grant" => Some(true),
                "deny" => Some(false),
                _ => None,
            },
        )?
        .ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidArgument,
                "decision is required: \"grant\" or \"deny\"",
            )
            .detail("field", "decision")
        })?;
        let reason = typed(&request, "reason", "a string", Value::as_str)?.map(str::to_owned);
        let decided =
            crate::operations::approvals::decide(session, &approval_id, decision, reason)?;
        Ok(DecidedView(decided))
    })
    .await
}
