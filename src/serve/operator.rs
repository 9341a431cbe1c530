//! What the operator endpoints share: the operator-only check, a body's
//! fields read one by one, and the write that answers its view.

use super::app::App;
use super::http::{error_response, json_object, json_response};
use crate::credentials::Principal;
use crate::error::{Error, ErrorCode, Result};
use crate::output::Render;
use crate::session::Session;
use axum::body::Body;
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::{Map, Value};

/// `forbidden` unless the token is the operator's.
pub(super) fn operator_only(principal: &Principal) -> Result<()> {
    if principal.is_operator() {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::Forbidden,
        "this endpoint takes an operator token",
    )
    .hint("discuss token issue NAME --operator"))
}

/// The body of an operator endpoint: `fields` alone, each checked by its
/// reader.
pub(super) fn fields_of(request: &Map<String, Value>, known: &[&str]) -> Result<()> {
    match request.keys().find(|k| !known.contains(&k.as_str())) {
        Some(unknown) => Err(Error::new(
            ErrorCode::UnknownField,
            format!("unknown field {unknown:?}"),
        )
        .detail("field", unknown.as_str())
        .hint(format!("this endpoint takes: {}", known.join(", ")))),
        None => Ok(()),
    }
}

pub(super) fn typed<'a, T>(
    request: &'a Map<String, Value>,
    field: &str,
    what: &str,
    read: impl Fn(&'a Value) -> Option<T>,
) -> Result<Option<T>> {
    match request.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => read(value).map(Some).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("{field} must be {what}"),
            )
            .detail("field", field)
        }),
    }
}

pub(super) fn strings(request: &Map<String, Value>, field: &str) -> Result<Vec<String>> {
    let read = |v: &Value| {
        v.as_array()?
            .iter()
            .map(|s| s.as_str().map(str::to_owned))
            .collect::<Option<Vec<String>>>()
    };
    Ok(typed(request, field, "a list of agent ids", read)?.unwrap_or_default())
}

/// Runs an operator write of the body and answers its view.
pub(super) async fn operator_write<V: Render + 'static>(
    app: App,
    principal: Principal,
    headers: HeaderMap,
    body: Body,
    write: impl FnOnce(&Session, Map<String, Value>) -> Result<V> + Send + 'static,
) -> Response {
    if let Err(err) = operator_only(&principal) {
        return error_response(&err);
    }
    let request = match json_object(&headers, body, app.max_body_bytes).await {
        Ok(request) => request,
        Err(err) => return error_response(&err),
    };
    match app
        .blocking(move |session| {
            crate::session::as_principal(session, &principal, false, || {
                Ok(write(session, request)?.value())
            })
        })
        .await
    {
        Ok(answer) => json_response(&answer),
        Err(err) => error_response(&err),
    }
}
