//! What every endpoint shares: the contract's error object with the HTTP
//! status of its class, JSON answers, request bodies read within the
//! limit, and query strings.

use crate::error::{Error, ErrorCode};
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

/// The HTTP status of an error code (`cli.md`, "`discuss serve`").
pub(super) fn status_of(code: ErrorCode) -> StatusCode {
    use ErrorCode::*;
    match code {
        Unauthorized => StatusCode::UNAUTHORIZED,
        Forbidden | AgentMismatch => StatusCode::FORBIDDEN,
        PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
        UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        KillSwitchEngaged | LedgerUnavailable | ServerBusy => StatusCode::SERVICE_UNAVAILABLE,
        WakeQuotaExceeded | SpendQuotaExceeded => StatusCode::TOO_MANY_REQUESTS,
        // A person, not a retry, resolves them.
        ApprovalRequired | ApprovalDenied => StatusCode::CONFLICT,
        _ => match code.exit_status() {
            3 | 2 => StatusCode::BAD_REQUEST,
            4 => StatusCode::NOT_FOUND,
            5 | 7 => StatusCode::CONFLICT,
            6 => StatusCode::TOO_MANY_REQUESTS,
            // `wait_timeout` and the like have no endpoint; internal and I/O.
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        },
    }
}

/// An error as its HTTP answer: the contract's error object, with
/// `WWW-Authenticate` on 401 and `Retry-After` (seconds) when the details
/// say when to come back.
pub(super) fn error_response(err: &Error) -> Response {
    let status = status_of(err.code);
    let mut response = (status, json_body(&err.to_json())).into_response();
    let headers = response.headers_mut();
    if status == StatusCode::UNAUTHORIZED {
        headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    if let Some(ms) = err.details.get("retry_after_ms").and_then(Value::as_i64) {
        let seconds = (ms.max(0) as u64).div_ceil(1000).max(1);
        headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        // The rest of the body is not read: the connection cannot be reused.
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// A `text/event-stream` answer of what `receiver` is sent, never cached
/// or buffered by a proxy.
pub(super) fn event_stream(
    receiver: tokio::sync::mpsc::Receiver<std::io::Result<axum::body::Bytes>>,
) -> Response {
    let body = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(receiver));
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// A JSON answer with status 200.
pub(super) fn json_response(value: &Value) -> Response {
    (StatusCode::OK, json_body(value)).into_response()
}

fn json_body(value: &Value) -> ([(header::HeaderName, HeaderValue); 1], String) {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        value.to_string(),
    )
}

/// `payload_too_large` for a body over `limit` bytes.
pub(super) fn too_large(limit: usize) -> Error {
    Error::new(
        ErrorCode::PayloadTooLarge,
        format!("the request body is over {limit} bytes"),
    )
    .detail("max_bytes", limit)
    .hint("--max-body-bytes on the server sets the limit")
}

/// A request body that must be one JSON object: `application/json`, at
/// most `limit` bytes (refused from `Content-Length` before any is read,
/// else when the limit is passed), UTF-8, and an object.
pub(super) async fn json_object(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
) -> Result<Map<String, Value>, Error> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if media != "application/json" {
        return Err(Error::new(
            ErrorCode::UnsupportedMediaType,
            format!("the body must be application/json, not {content_type:?}"),
        )
        .hint("send Content-Type: application/json"));
    }
    if declared_length(headers).is_some_and(|len| len > limit as u64) {
        return Err(too_large(limit));
    }
    let bytes = axum::body::to_bytes(body, limit)
        .await
        .map_err(|_| too_large(limit))?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("the request body is not UTF-8: {e}"),
        )
    })?;
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(Error::new(
            ErrorCode::InvalidArgument,
            "the request body must be a JSON object",
        )),
        Err(e) => Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("the request body is not JSON: {e}"),
        )),
    }
}

/// `Content-Length`, when the request says it.
pub(super) fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// The pairs of a query string, percent-decoded; `unknown_field` for a
/// key not in `known`, `invalid_argument` for one that does not decode.
pub(super) fn query_pairs(
    query: Option<&str>,
    known: &[&str],
) -> Result<Vec<(String, String)>, Error> {
    let mut pairs = Vec::new();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let (key, value) = (decode(key)?, decode(value)?);
        if !known.contains(&key.as_str()) {
            return Err(Error::new(
                ErrorCode::UnknownField,
                format!("unknown query parameter {key:?}"),
            )
            .detail("field", key.as_str())
            .hint(format!("this endpoint takes: {}", known.join(", "))));
        }
        pairs.push((key, value));
    }
    Ok(pairs)
}

/// The one value of `key`, refusing it given twice.
pub(super) fn single<'a>(
    pairs: &'a [(String, String)],
    key: &str,
) -> Result<Option<&'a str>, Error> {
    let mut values = pairs
        .iter()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.as_str());
    let first = values.next();
    if values.next().is_some() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("the query parameter {key} is given more than once"),
        )
        .detail("field", key));
    }
    Ok(first)
}

fn decode(text: &str) -> Result<String, Error> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                let Some(byte) = hex else {
                    return Err(bad_query(text));
                };
                out.push(byte);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| bad_query(text))
}

fn bad_query(text: &str) -> Error {
    Error::new(
        ErrorCode::InvalidArgument,
        format!("the query string does not decode: {text:?}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_strings_decode_and_refuse_what_they_do_not_know() {
        let pairs = query_pairs(
            Some("status=open&status=active&agent=a%2Db+c"),
            &["status", "agent"],
        )
        .unwrap();
        assert_eq!(pairs.len(), 3);
        assert_eq!(pairs[2], ("agent".into(), "a-b c".into()));
        assert!(single(&pairs, "status").is_err());
        assert_eq!(single(&pairs, "agent").unwrap(), Some("a-b c"));
        let err = query_pairs(Some("bogus=1"), &["status"]).unwrap_err();
        assert_eq!(err.code, ErrorCode::UnknownField);
        assert_eq!(
            query_pairs(Some("status=%zz"), &["status"])
                .unwrap_err()
                .code,
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            query_pairs(Some("status=%ff"), &["status"])
                .unwrap_err()
                .code,
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn statuses_follow_the_contract() {
        for (code, status) in [
            (ErrorCode::InvalidId, StatusCode::BAD_REQUEST),
            (ErrorCode::UnknownDiscussion, StatusCode::NOT_FOUND),
            (ErrorCode::StaleHead, StatusCode::CONFLICT),
            (ErrorCode::DiscussionInvalid, StatusCode::CONFLICT),
            (ErrorCode::WakeQuotaExceeded, StatusCode::TOO_MANY_REQUESTS),
            (
                ErrorCode::KillSwitchEngaged,
                StatusCode::SERVICE_UNAVAILABLE,
            ),
            (
                ErrorCode::LedgerUnavailable,
                StatusCode::SERVICE_UNAVAILABLE,
            ),
            (ErrorCode::IoError, StatusCode::INTERNAL_SERVER_ERROR),
            (ErrorCode::AgentMismatch, StatusCode::FORBIDDEN),
        ] {
            assert_eq!(status_of(code), status, "{code:?}");
        }
        let err = Error::new(ErrorCode::WakeQuotaExceeded, "x").detail("retry_after_ms", 1_500);
        let response = error_response(&err);
        assert_eq!(response.headers()[header::RETRY_AFTER], "2");
        let response = error_response(&Error::new(ErrorCode::Unauthorized, "x"));
        assert_eq!(response.headers()[header::WWW_AUTHENTICATE], "Bearer");
    }
}
