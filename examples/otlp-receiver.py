#!/usr/bin/env python3
"""A collector-compatible OTLP/HTTP receiver for trying traces locally
(OTLP/JSON: run discuss with OTEL_EXPORTER_OTLP_PROTOCOL=http/json).

  examples/otlp-receiver.py serve FILE   # prints its port, appends each
                                         # request's spans to FILE
  examples/otlp-receiver.py tree FILE    # the spans in FILE as a tree

Only the Python standard library; binds 127.0.0.1 only.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


def serve(path):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            ok = self.path == "/v1/traces" and "json" in self.headers.get("Content-Type", "")
            if ok:
                with open(path, "a") as out:
                    out.write(json.dumps(json.loads(body)) + "\n")
            self.send_response(200 if ok else 415)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


def value(any_value):
    return next(iter(any_value.values()), None) if any_value else None


def tree(path):
    spans = []
    for line in open(path):
        for resource in json.loads(line).get("resourceSpans", []):
            for scope in resource.get("scopeSpans", []):
                spans.extend(scope.get("spans", []))
    ids = {s["spanId"] for s in spans}
    children = {}
    for span in spans:
        parent = span.get("parentSpanId") or ""
        children.setdefault(parent if parent in ids else "", []).append(span)

    def show(span, depth):
        attributes = {a["key"]: value(a.get("value")) for a in span.get("attributes", [])}
        said = [f"{k}={attributes[k]}" for k in (
            "gen_ai.conversation.id", "discuss.turn", "discuss.attempt.state", "error.type")
            if k in attributes]
        error = " ERROR" if span.get("status", {}).get("code") in (2, "STATUS_CODE_ERROR") else ""
        print("  " * depth + span["name"] + error + ("  " + " ".join(said) if said else ""))
        for child in sorted(children.get(span["spanId"], []), key=lambda s: s["startTimeUnixNano"]):
            show(child, depth + 1)

    for root in sorted(children.get("", []), key=lambda s: s["startTimeUnixNano"]):
        show(root, 0)


if __name__ == "__main__":
    {"serve": serve, "tree": tree}[sys.argv[1]](sys.argv[2])
