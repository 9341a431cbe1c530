//! Traces (`docs/traces.md`): spans over OTLP/HTTP through the
//! OpenTelemetry SDK, when `OTEL_EXPORTER_OTLP_ENDPOINT` (or its traces
//! variant) names a collector and `OTEL_SDK_DISABLED` is not `true`.
//! Without one, nothing is built and every span here is a no-op: a plain
//! command pays one look at two variables. What a span carries is ids,
//! counts and codes, never a payload, a body or a token.

use opentelemetry::trace::{
    SpanKind, Status, TraceContextExt as _, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue, Value};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

/// The longest a command waits for its spans to leave at its end (and the
/// exporter for one request): a collector down or slow costs no more.
const EXPORT_BOUND: Duration = Duration::from_secs(1);

/// The exporter of this process, once started (`None`: not wanted, or it
/// could not be built).
static EXPORTER: OnceLock<Option<Exporter>> = OnceLock::new();

struct Exporter {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
}

/// Whether spans are wanted: an endpoint named, the SDK not disabled.
fn wanted() -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let disabled =
        std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"));
    !disabled && (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
}

fn exporter() -> Option<&'static Exporter> {
    EXPORTER.get_or_init(build).as_ref()
}

/// The SDK's exporter over HTTP (protobuf, or JSON as
/// `OTEL_EXPORTER_OTLP_PROTOCOL` says; endpoint and headers from the
/// standard variables), behind a batch processor of its own thread.
fn build() -> Option<Exporter> {
    if !wanted() {
        return None;
    }
    use opentelemetry_otlp::{Protocol, RetryPolicy, WithExportConfig as _, WithHttpConfig as _};
    let named = std::env::var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        .or_else(|_| std::env::var("OTEL_EXPORTER_OTLP_PROTOCOL"));
    let protocol = match named.as_deref().map(str::trim) {
        Ok("http/json") => Protocol::HttpJson,
        Ok("http/protobuf") | Ok("") | Err(_) => Protocol::HttpBinary,
        Ok(other) => {
            say!(
                "warning: OTEL_EXPORTER_OTLP_PROTOCOL={} is not supported: traces go over http/protobuf (a collector's port 4318, path /v1/traces); set http/protobuf or http/json",
                crate::escape::printable(other, false)
            );
            Protocol::HttpBinary
        }
    };
    // A command lives for a moment: a collector that refuses is told at
    // once, not after retries with backoff (0.8 s at every command's end);
    // a server keeps the SDK's retries for a collector's blip.
    let retries = if LONG_LIVED.load(std::sync::atomic::Ordering::Relaxed) {
        RetryPolicy::default()
    } else {
        RetryPolicy::disabled()
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(protocol)
        .with_timeout(EXPORT_BOUND)
        .with_retry_policy(retries)
        .build();
    let exporter = match exporter {
        Ok(exporter) => exporter,
        Err(err) => {
            say!(
                "warning: traces are not exported: {}",
                masked(&err.to_string())
            );
            return None;
        }
    };
    // `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` are read by the
    // SDK's own detectors; `discuss` is the name when they give none.
    let named = std::env::var_os("OTEL_SERVICE_NAME").is_some()
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES")
            .is_ok_and(|attributes| attributes.contains("service.name="));
    let mut resource = opentelemetry_sdk::Resource::builder();
    if !named {
        resource = resource.with_service_name("discuss");
    }
    let resource = resource
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .build();
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(Told(exporter))
        .with_resource(resource)
        .build();
    let tracer = provider.tracer("discuss");
    Some(Exporter { provider, tracer })
}

/// Set by a process that runs for long (`serve`, `mcp`) before its first
/// span: its exports are retried.
static LONG_LIVED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// This process runs for long: a failed export is tried again with the
/// SDK's backoff.
pub(crate) fn long_lived() {
    LONG_LIVED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// `text` with the collector's endpoints as the variables name them
/// masked: a password and a query (where a credential may be) never
/// reach a terminal or a log.
fn masked(text: &str) -> String {
    let mut text = text.to_owned();
    for name in [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ] {
        if let Ok(value) = std::env::var(name)
            && !value.is_empty()
        {
            text = text.replace(&value, &masked_url(&value));
        }
    }
    text
}

/// A URL with what follows `user:` in its authority and its query hidden.
fn masked_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{name}:***@{host}"),
            None => format!("***@{host}"),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, _)) => format!("{path}?***"),
        None => tail.to_owned(),
    };
    let scheme = if scheme.is_empty() {
        String::new()
    } else {
        format!("{scheme}://")
    };
    format!("{scheme}{authority}{tail}")
}

/// The first export that failed, kept for the one warning `finish` gives
/// (the SDK's batch processor keeps its exporter's errors to itself).
static FAILED: OnceLock<String> = OnceLock::new();

/// The OTLP exporter, its failures told to `finish`.
#[derive(Debug)]
struct Told(opentelemetry_otlp::SpanExporter);

impl opentelemetry_sdk::trace::SpanExporter for Told {
    async fn export(
        &self,
        batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        let exported = self.0.export(batch).await;
        if let Err(err) = &exported {
            let _ = FAILED.set(err.to_string());
        }
        exported
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.force_flush()
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.0.set_resource(resource);
    }
}

/// At the end of a command: the spans still queued leave, within a second;
/// a collector that did not take them is one warning, never a failure.
pub(crate) fn finish() {
    let Some(Some(exporter)) = EXPORTER.get() else {
        return;
    };
    let shut = exporter.provider.shutdown_with_timeout(EXPORT_BOUND);
    let failed = FAILED.get().cloned().or(shut.err().map(|e| e.to_string()));
    if let Some(why) = failed {
        say!(
            "warning: traces were not exported: {}",
            one_line(&masked(&why))
        );
    }
}

/// An error on one line, not too long for a terminal's warning.
fn one_line(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

/// Where a span hangs: under the span a W3C `traceparent` names (this
/// process's `TRACEPARENT`, a request's header), or under a span of this
/// process.
pub(crate) enum Parent<'a> {
    /// The span this thread works under (`Traced::enter`), else
    /// `TRACEPARENT` in the environment, if any.
    Inherited,
    /// A `traceparent` header's value, if any.
    Header(Option<&'a str>),
}

/// One span, ended when dropped; nothing at all when traces are off.
pub(crate) struct Traced {
    span: Option<Context>,
}

/// A span named `name` of `kind` under `parent`.
pub(crate) fn start(name: impl Into<String>, kind: SpanKind, parent: Parent<'_>) -> Traced {
    let Some(exporter) = exporter() else {
        return Traced { span: None };
    };
    let parent = match parent {
        Parent::Inherited if Context::current().has_active_span() => Context::current(),
        Parent::Inherited => from_traceparent(std::env::var("TRACEPARENT").ok().as_deref()),
        Parent::Header(value) => from_traceparent(value),
    };
    let span = exporter
        .tracer
        .span_builder(name.into())
        .with_kind(kind)
        .start_with_context(&exporter.tracer, &parent);
    Traced {
        span: Some(parent.with_span(span)),
    }
}

/// A write's or a tool call's span told how it went: the discussion (the
/// one asked for, else the one the answer names) and, on a refusal, the
/// contract's code as `error.type`.
pub(crate) fn outcome(
    span: &Traced,
    asked_for: Option<&str>,
    answered: &crate::error::Result<serde_json::Value>,
) {
    if !span.is_on() {
        return;
    }
    let named = answered
        .as_ref()
        .ok()
        .and_then(|answer| answer["discussion_id"].as_str());
    if let Some(id) = named.or(asked_for) {
        span.set("gen_ai.conversation.id", id.to_owned());
        span.set("discuss.discussion_id", id.to_owned());
    }
    match answered {
        Err(err) => span.fail(err.code.as_str()),
        // A supervised turn that ran and did not complete: its command's
        // span fails with it, as the turn's own does.
        Ok(answer) => {
            if let Some(state @ ("failed" | "deadman")) = answer["attempt"]["state"].as_str() {
                span.fail(state);
            }
        }
    }
}

/// The context a `traceparent` names (an invalid one names none).
fn from_traceparent(value: Option<&str>) -> Context {
    use opentelemetry::propagation::TextMapPropagator as _;
    let Some(value) = value else {
        return Context::new();
    };
    let carrier = HashMap::from([("traceparent".to_owned(), value.to_owned())]);
    TraceContextPropagator::new().extract(&carrier)
}

impl Traced {
    /// Sets an attribute (an id, a count, a code: never a payload).
    pub(crate) fn set(&self, key: &'static str, value: impl Into<Value>) {
        if let Some(cx) = &self.span {
            cx.span().set_attribute(KeyValue::new(key, value));
        }
    }

    /// A refusal or failure: `error.type` (the contract's code) and the
    /// span's status `Error`.
    pub(crate) fn fail(&self, error_type: &str) {
        if let Some(cx) = &self.span {
            cx.span()
                .set_attribute(KeyValue::new("error.type", error_type.to_owned()));
            cx.span().set_status(Status::error(error_type.to_owned()));
        }
    }

    /// Whether a span is being recorded (traces are on).
    pub(crate) fn is_on(&self) -> bool {
        self.span.is_some()
    }

    /// The context of this span, to carry into work done elsewhere (an
    /// async request's handlers).
    pub(crate) fn context(&self) -> Context {
        self.span.clone().unwrap_or_default()
    }

    /// Makes this span the parent of those this thread starts until the
    /// guard goes.
    pub(crate) fn enter(&self) -> Option<opentelemetry::ContextGuard> {
        self.span.clone().map(Context::attach)
    }

    /// The W3C `traceparent` naming this span, for a child to continue.
    pub(crate) fn traceparent(&self) -> Option<String> {
        use opentelemetry::propagation::TextMapPropagator as _;
        let cx = self.span.as_ref()?;
        let mut carrier = HashMap::new();
        TraceContextPropagator::new().inject_context(cx, &mut carrier);
        carrier.remove("traceparent")
    }
}

impl Drop for Traced {
    fn drop(&mut self) {
        if let Some(cx) = &self.span {
            cx.span().end();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoints_credentials_are_masked() {
        assert_eq!(
            masked_url("http://user:secret@[bad"),
            "http://user:***@[bad"
        );
        assert_eq!(
            masked_url("https://token@collector:4318/v1/traces?key=k#x"),
            "https://***@collector:4318/v1/traces?***"
        );
        assert_eq!(masked_url("http://127.0.0.1:4318"), "http://127.0.0.1:4318");
        assert_eq!(masked_url("a:b@c"), "a:***@c");
    }

    #[test]
    fn a_traceparent_is_read_as_w3c_writes_it() {
        let cx = from_traceparent(Some(
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        ));
        let span = cx.span();
        let parent = span.span_context();
        assert!(parent.is_valid() && parent.is_remote());
        assert_eq!(
            parent.trace_id().to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert!(
            !from_traceparent(Some("garbage"))
                .span()
                .span_context()
                .is_valid()
        );
        assert!(!from_traceparent(None).span().span_context().is_valid());
    }
}
