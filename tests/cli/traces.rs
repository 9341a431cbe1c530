//! Traces: what `discuss` sends an OTLP/HTTP receiver, decoded here from
//! the bytes it received (protobuf, or JSON when asked), by a receiver
//! of the test's own on 127.0.0.1 (`Receiver`): the supervised turn's
//! span and the child's `TRACEPARENT`, the tools' spans and their parents,
//! the resource, nothing secret, and bounded costs when no one answers.

use crate::common::http::Served;
use crate::common::*;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use prost::Message as _;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the receiver answers.
#[derive(Clone, Copy, PartialEq)]
enum Answering {
    Ok,
    /// Takes the request and never answers.
    Never,
    /// Closes each connection as soon as it is made, as a collector that
    /// is going away does.
    Hangup,
}

/// Each request to `/v1/traces`: its content type and body, as received.
type Received = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// An OTLP/HTTP receiver.
struct Receiver {
    port: u16,
    received: Received,
    /// Connections taken.
    connections: Arc<std::sync::atomic::AtomicUsize>,
}

impl Receiver {
    fn start(answering: Answering) -> Receiver {
        Receiver::on(TcpListener::bind("127.0.0.1:0").unwrap(), answering)
    }

    fn on(listener: TcpListener, answering: Answering) -> Receiver {
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&received);
        let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = Arc::clone(&connections);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if answering == Answering::Hangup {
                    drop(stream);
                    continue;
                }
                let kept = Arc::clone(&kept);
                std::thread::spawn(move || serve(stream, &kept, answering));
            }
        });
        Receiver {
            port,
            received,
            connections,
        }
    }

    fn connections(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The raw bodies received so far.
    fn bodies(&self) -> Vec<(String, Vec<u8>)> {
        self.received.lock().unwrap().clone()
    }

    /// Every span received, decoded by its content type.
    fn spans(&self) -> Vec<Span> {
        let mut spans = Vec::new();
        for (content_type, body) in self.bodies() {
            let request = if content_type.contains("json") {
                serde_json::from_slice::<ExportTraceServiceRequest>(&body)
                    .unwrap_or_else(|e| panic!("OTLP/JSON: {e}"))
            } else {
                assert_eq!(content_type, "application/x-protobuf");
                ExportTraceServiceRequest::decode(&body[..]).expect("OTLP protobuf")
            };
            for resource_spans in request.resource_spans {
                let resource = attributes(
                    &resource_spans
                        .resource
                        .map(|r| r.attributes)
                        .unwrap_or_default(),
                );
                for scope in resource_spans.scope_spans {
                    for span in scope.spans {
                        spans.push(Span {
                            name: span.name,
                            trace_id: hex(&span.trace_id),
                            span_id: hex(&span.span_id),
                            parent_span_id: hex(&span.parent_span_id),
                            kind: span.kind,
                            status: span.status.map_or(0, |s| s.code),
                            attributes: attributes(&span.attributes),
                            resource: resource.clone(),
                        });
                    }
                }
            }
        }
        spans
    }
}

/// One connection: requests read whole (`Content-Length`), kept, and
/// answered with an empty success (or never).
fn serve(stream: TcpStream, kept: &Mutex<Vec<(String, Vec<u8>)>>, answering: Answering) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut headers = HashMap::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').unwrap();
            headers.insert(name.to_ascii_lowercase(), value.trim().to_owned());
        }
        let len: usize = headers["content-length"].parse().unwrap();
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        assert!(
            request_line.starts_with("POST /v1/traces "),
            "{request_line}"
        );
        let content_type = headers["content-type"].clone();
        kept.lock().unwrap().push((content_type.clone(), body));
        if answering == Answering::Never {
            std::thread::sleep(Duration::from_secs(3600));
        }
        let _ = stream.write_all(
            format!("HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: 0\r\n\r\n")
                .as_bytes(),
        );
    }
}

#[derive(Debug, Clone)]
struct Span {
    name: String,
    trace_id: String,
    span_id: String,
    parent_span_id: String,
    kind: i32,
    /// 0 unset, 1 ok, 2 error.
    status: i32,
    attributes: HashMap<String, Value>,
    resource: HashMap<String, Value>,
}

const SPAN_KIND_INTERNAL: i32 = 1;
const SPAN_KIND_SERVER: i32 = 2;
const STATUS_ERROR: i32 = 2;

fn attributes(kvs: &[opentelemetry_proto::tonic::common::v1::KeyValue]) -> HashMap<String, Value> {
    kvs.iter()
        .map(|kv| {
            let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(Any::StringValue(s)) => json!(s),
                Some(Any::IntValue(i)) => json!(i),
                Some(Any::DoubleValue(d)) => json!(d),
                Some(Any::BoolValue(b)) => json!(b),
                other => json!(format!("{other:?}")),
            };
            (kv.key.clone(), value)
        })
        .collect()
}

fn named<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    spans
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no span {name} among {:?}", names(spans)))
}

fn names(spans: &[Span]) -> Vec<&str> {
    spans.iter().map(|s| s.name.as_str()).collect()
}

fn bin() -> String {
    assert_cmd::cargo::cargo_bin("discuss")
        .display()
        .to_string()
}

/// `discuss` with the receiver as its endpoint (and `more`).
fn traced<'a>(receiver: &'a Receiver, more: &[(&'a str, &'a str)]) -> Vec<(&'a str, String)> {
    let mut envs = vec![("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())];
    envs.extend(more.iter().map(|(k, v)| (*k, (*v).to_owned())));
    envs
}

fn run_traced(env: &Env, envs: &[(&str, String)], args: &[&str]) -> Outcome {
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.run_with(&envs, args, "")
}

/// A supervised turn: `invoke_agent agent-b` with the GenAI attributes,
/// its status from how the turn ended, and the child's `TRACEPARENT`
/// naming it (the child's own `reply` nests under it); the wake's span
/// above it.
#[test]
fn a_supervised_turn_is_an_invoke_agent_span_the_child_continues() {
    let receiver = Receiver::start(Answering::Ok);
    let envs = traced(&receiver, &[("PATH", "/usr/bin:/bin")]);
    let env = Env::file();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "5000"]);
    let script = format!(
        "echo \"$TRACEPARENT\" > traceparent; {} reply --type result --payload '{{\"body\":\"Yes\"}}' \
         --usage '{{\"input_tokens\":1200,\"output_tokens\":300,\"cost_usd\":0.012}}'",
        bin()
    );
    let mut args = wake_argv("agent-b", &dsc, &root, &["--"], true);
    args.extend(["sh", "-c", &script]);
    let out = run_traced(&env, &envs, &args);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let spans = receiver.spans();
    let turn = named(&spans, "invoke_agent agent-b");
    let wake = named(&spans, "wake_agent");
    let reply = named(&spans, "reply_discussion");
    let a = &turn.attributes;
    assert_eq!(a["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(a["gen_ai.agent.id"], "agent-b");
    assert_eq!(a["gen_ai.conversation.id"], dsc.as_str());
    assert_eq!(a["discuss.turn"], 2);
    assert_eq!(a["discuss.attempt.state"], "completed");
    assert!(
        a["discuss.attempt_id"]
            .as_str()
            .unwrap()
            .starts_with("att_")
    );
    assert_eq!(a["gen_ai.usage.input_tokens"], 1200);
    assert_eq!(a["gen_ai.usage.output_tokens"], 300);
    assert_eq!(a["discuss.cost_usd"], 0.012);
    assert_ne!(turn.status, STATUS_ERROR);
    assert_eq!(turn.kind, SPAN_KIND_INTERNAL);
    // One trace: the wake, the turn under it, the agent's reply under that.
    assert_eq!(turn.parent_span_id, wake.span_id);
    assert_eq!(reply.parent_span_id, turn.span_id);
    assert!(spans.iter().all(|s| s.trace_id == wake.trace_id));
    let traceparent = std::fs::read_to_string(env.dir.path().join("traceparent")).unwrap();
    assert_eq!(
        traceparent.trim(),
        format!("00-{}-{}-01", turn.trace_id, turn.span_id)
    );
    // The resource: this program, by default.
    assert_eq!(turn.resource["service.name"], "discuss");

    // A turn that exits without a reply, and one its deadline kills.
    let (dsc, root) = env.ask(&["--turn-timeout-ms", "1000"]);
    let mut args = wake_argv(
        "agent-b",
        &dsc,
        &root,
        &["--kill-grace-ms", "200", "--"],
        true,
    );
    args.extend(["sh", "-c", "exit 3"]);
    assert_eq!(run_traced(&env, &envs, &args).status, 8);
    let (dsc2, root2) = env.ask(&["--turn-timeout-ms", "1000"]);
    let mut args = wake_argv(
        "agent-b",
        &dsc2,
        &root2,
        &["--kill-grace-ms", "200", "--"],
        true,
    );
    args.extend(["sleep", "30"]);
    assert_eq!(run_traced(&env, &envs, &args).status, 9);
    let spans = receiver.spans();
    let of = |dsc: &str| {
        spans
            .iter()
            .find(|s| {
                s.name == "invoke_agent agent-b" && s.attributes["gen_ai.conversation.id"] == dsc
            })
            .unwrap()
            .clone()
    };
    let failed = of(&dsc);
    assert_eq!(failed.attributes["discuss.attempt.state"], "failed");
    assert_eq!(failed.attributes["error.type"], "failed");
    assert_eq!(failed.status, STATUS_ERROR);
    let deadman = of(&dsc2);
    assert_eq!(deadman.attributes["discuss.attempt.state"], "deadman");
    assert_eq!(deadman.attributes["error.type"], "deadman");
    assert_eq!(deadman.status, STATUS_ERROR);
    // The root of each such trace, the wake, fails with its turn: a viewer
    // lists failed traces by their root.
    for (dsc, state) in [(&dsc, "failed"), (&dsc2, "deadman")] {
        let wake = spans
            .iter()
            .find(|s| s.name == "wake_agent" && s.attributes["gen_ai.conversation.id"] == **dsc)
            .unwrap();
        assert_eq!(wake.status, STATUS_ERROR, "{state}");
        assert_eq!(wake.attributes["error.type"], state);
    }
    // The completed one does not.
    assert_ne!(wake.status, STATUS_ERROR);
}

/// A refused write says why (`error.type`, the contract's code); a
/// `TRACEPARENT` in the environment is its parent; JSON when asked.
#[test]
fn a_refused_wake_carries_its_code_under_the_callers_trace_in_json_too() {
    let receiver = Receiver::start(Answering::Ok);
    let parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let envs = traced(
        &receiver,
        &[
            ("TRACEPARENT", parent),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_SERVICE_NAME", "fleet-7"),
            ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci"),
        ],
    );
    let env = Env::file();
    let (dsc, _) = env.discussion(&[]);
    let out = run_traced(
        &env,
        &envs,
        &wake_argv(
            "agent-b",
            &dsc,
            "msg_0000000000000000000000000000dead",
            &[],
            true,
        ),
    );
    assert_eq!(out.status, 5, "{}", out.stderr);
    let bodies = receiver.bodies();
    assert!(
        bodies.iter().all(|(t, _)| t == "application/json"),
        "{:?}",
        bodies.iter().map(|(t, _)| t).collect::<Vec<_>>()
    );
    let spans = receiver.spans();
    let wake = named(&spans, "wake_agent");
    assert_eq!(wake.attributes["error.type"], "stale_head");
    assert_eq!(wake.status, STATUS_ERROR);
    assert_eq!(wake.attributes["gen_ai.conversation.id"], dsc.as_str());
    assert_eq!(wake.trace_id, "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(wake.parent_span_id, "b7ad6b7169203331");
    assert_eq!(wake.resource["service.name"], "fleet-7");
    assert_eq!(wake.resource["deployment.environment"], "ci");
}

/// `serve`: a server span per request, continuing the request's
/// `traceparent`, with the tool call's span under it; and nothing secret
/// in any byte received: not the payload, not the token.
#[test]
fn serve_continues_an_incoming_traceparent_and_exports_nothing_secret() {
    let receiver = Receiver::start(Answering::Ok);
    let env = Env::file();
    env.fleet();
    let token = env.ok(&["token", "issue", "agent-a"])["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let envs: Vec<(&str, String)> = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        ("OTEL_BSP_SCHEDULE_DELAY", "50".to_owned()),
    ];
    let server = Served::start_with(&env, &[], &envs);
    let marker = "MARKER-4f1c-not-for-export";
    let body = json!({"from_agent_id": "agent-a", "to_agent_id": "agent-b", "fleet_id": "fleet-alpha",
        "payload": format!("{{\"body\":\"{marker}\"}}")});
    let reply = server.request(
        "POST",
        "/v1/tools/ask_peer",
        Some(&token),
        &[
            ("content-type", "application/json"),
            (
                "traceparent",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            ),
        ],
        Some(body.to_string().as_bytes()),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    // The same tool over MCP's streamable HTTP: its span under the
    // request's too.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "inbox", "arguments": {"agent_id": "agent-a"}}});
    let reply = server.request(
        "POST",
        "/mcp",
        Some(&token),
        &[
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2025-11-25"),
            (
                "traceparent",
                "00-5bf92f3577b34da6a3ce929d0e0e4736-10f067aa0ba902b7-01",
            ),
        ],
        Some(call.to_string().as_bytes()),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(server.stop().0, 0);
    let spans = receiver.spans();
    let request = named(&spans, "POST /v1/tools/ask_peer");
    assert_eq!(request.kind, SPAN_KIND_SERVER);
    assert_eq!(request.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(request.parent_span_id, "00f067aa0ba902b7");
    assert_eq!(request.attributes["http.response.status_code"], 200);
    assert_eq!(request.attributes["url.scheme"], "http");
    assert_eq!(request.attributes["url.path"], "/v1/tools/ask_peer");
    // A tool call is GenAI's `execute_tool {name}`.
    let tool = named(&spans, "execute_tool ask_peer");
    assert_eq!(tool.parent_span_id, request.span_id);
    assert_eq!(tool.attributes["gen_ai.operation.name"], "execute_tool");
    assert_eq!(tool.attributes["gen_ai.tool.name"], "ask_peer");
    let mcp = named(&spans, "POST /mcp");
    assert_eq!(mcp.trace_id, "5bf92f3577b34da6a3ce929d0e0e4736");
    let inbox = named(&spans, "execute_tool inbox");
    assert_eq!(inbox.parent_span_id, mcp.span_id, "nested under /mcp");
    assert_eq!(inbox.trace_id, mcp.trace_id);
    for (_, bytes) in receiver.bodies() {
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(marker), "a payload was exported");
        assert!(!text.contains(&token), "a token was exported");
        assert!(
            !text.contains(&token[4..20]),
            "a piece of the token was exported"
        );
    }
}

/// A collector that is down, or that never answers, costs a command a
/// bounded wait and one warning, never its success; without an endpoint,
/// or with the SDK disabled, nothing is sent (a receiver on the default
/// port hears nothing).
#[test]
fn a_collector_down_or_silent_costs_a_bounded_wait_and_none_is_sent_unasked() {
    let env = Env::file();
    env.fleet();
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    let silent = Receiver::start(Answering::Never);
    let ask: Vec<&str> = ASK_A_TO_B
        .iter()
        .copied()
        .chain(["{\"body\":\"x\"}"])
        .collect();
    for endpoint in [format!("http://127.0.0.1:{closed_port}"), silent.endpoint()] {
        let started = Instant::now();
        let out = env.run_with(
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)],
            &ASK_A_TO_B
                .iter()
                .copied()
                .chain(["{\"body\":\"x\"}"])
                .collect::<Vec<_>>(),
            "",
        );
        let took = started.elapsed();
        assert_eq!(out.status, 0, "{}", out.stderr);
        assert!(took < Duration::from_secs(4), "{endpoint}: {took:?}");
        let warnings = out
            .stderr
            .lines()
            .filter(|l| l.starts_with("warning:"))
            .count();
        assert_eq!(warnings, 1, "{endpoint}: {}", out.stderr);
    }
    assert!(!silent.bodies().is_empty(), "the silent receiver was asked");

    // A collector that hangs up is asked once at a command's end, never
    // again with backoff (four tries cost every command 0.8 s).
    let hanging_up = Receiver::start(Answering::Hangup);
    let out = env.run_with(
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &hanging_up.endpoint())],
        &ask,
        "",
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(hanging_up.connections(), 1, "{}", out.stderr);

    // A protocol that is not spoken is said, with what to use; an endpoint
    // that is no URL is named with its password masked.
    let answering = Receiver::start(Answering::Ok);
    let out = env.run_with(
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &answering.endpoint()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ],
        &ask,
        "",
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(answering.spans().len(), 1, "sent over http/protobuf still");
    assert!(
        out.stderr
            .contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported")
            && out.stderr.contains("http/protobuf or http/json"),
        "{}",
        out.stderr
    );
    let out = env.run_with(
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://user:s3cret@[bad")],
        &ask,
        "",
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(out.stderr.contains("user:***@[bad"), "{}", out.stderr);
    assert!(!out.stderr.contains("s3cret"), "{}", out.stderr);

    // The default endpoint (127.0.0.1:4318), when free: nothing reaches
    // it without an endpoint named, nor with the SDK disabled.
    let Ok(default) = TcpListener::bind("127.0.0.1:4318") else {
        panic!("port 4318 is taken: the test needs it to show nothing is sent");
    };
    let listening = Receiver::on(default, Answering::Ok);
    env.ok(&["list"]);
    env.ask(&[]);
    let disabled = [
        ("OTEL_SDK_DISABLED", "true"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
    ];
    let out = env.run_with(&disabled, &["--json", "list"], "");
    assert_eq!(out.status, 0);
    // Each command has exited: whatever it would have sent, it sent.
    assert!(listening.bodies().is_empty(), "nothing is sent unasked");
}
