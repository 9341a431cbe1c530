// A whole discussion through `discuss mcp` (stdio) and through `discuss
// serve` (streamable HTTP, each agent with its own token) with the official
// TypeScript SDK.
//
// Usage: node client.mjs DISCUSS_BINARY   (with @modelcontextprotocol/sdk
// installed where Node finds it; `.ci/run` installs it from npm). Exits 0
// when every check holds.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";

const binary = process.argv[2];
const folder = mkdtempSync(join(tmpdir(), "discuss-mcp-"));

// `clients` holds one client per agent (the same server for stdio).
async function discussion(clients, transport) {
const client = clients["agent-a"];
for (const one of Object.values(clients)) assert.equal(one.getServerVersion().name, "discuss");

const { tools } = await client.listTools();
assert.deepEqual(tools.map((t) => t.name).sort(),
  ["ask_peer", "get_discussion", "inbox", "list_discussions", "reply_discussion", "take_turn",
    "wake_agent"]);
const reply = tools.find((t) => t.name === "reply_discussion");
assert.deepEqual(reply.inputSchema.properties.type.enum, ["question", "result"]);
for (const tool of tools) {
  const reader = ["get_discussion", "list_discussions", "inbox"].includes(tool.name);
  assert.equal(tool.annotations.readOnlyHint, reader, tool.name);
  assert.equal(tool.annotations.destructiveHint, false, tool.name);
  assert.equal(tool.outputSchema.type, "object", tool.name);
}

async function call(name, args) {
  const agent = args.agent_id ?? args.from_agent_id ?? "agent-a";
  const result = await clients[agent].callTool({ name, arguments: args });
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  return result;
}
async function ok(name, args) {
  const result = await call(name, args);
  assert.equal(result.isError, false, JSON.stringify(result));
  return result.structuredContent;
}

const asked = await ok("ask_peer", {
  from_agent_id: "agent-a", to_agent_id: "agent-b", fleet_id: "fleet-alpha",
  payload: JSON.stringify({ body: "Refactor auth module?" }), max_turns: 4,
});
const dsc = asked.discussion_id;
let head = asked.root_message_id;
for (const [agent, type, close] of [["agent-b", "question", false], ["agent-a", "question", false], ["agent-b", "result", true]]) {
  const woken = await ok("wake_agent", { agent_id: agent, discussion_id: dsc, expected_head_message_id: head });
  const row = (await ok("inbox", { agent_id: agent })).discussions[0];
  assert.equal(row.live_attempt_id, woken.attempt.attempt_id);
  const replied = await ok("reply_discussion", {
    agent_id: agent, discussion_id: dsc, attempt_id: woken.attempt.attempt_id,
    reply_to_message_id: head, type, payload: JSON.stringify({ body: `${type} from ${agent}` }), close,
  });
  head = replied.message_id;
}
const state = await ok("get_discussion", { discussion_id: dsc });
assert.equal(state.status, "closed");
assert.equal(state.transcript.length, 4);

const refused = await call("ask_peer", {
  from_agent_id: "agent-a", to_agent_id: "agent-a", fleet_id: "fleet-alpha", payload: "{}",
});
assert.equal(refused.isError, true);
assert.equal(refused.structuredContent.error.code, "same_agent");
assert.equal((await ok("inbox", { agent_id: "agent-b" })).discussions.length, 0);

for (const one of Object.values(clients)) await one.close();
console.log(`typescript sdk over ${transport}: schemas, four turns, a refusal: ok`);
}

for (const transport of ["stdio", "http"]) {
  const env = { DISCUSS_LEDGER: join(folder, `${transport}.jsonl`), DISCUSS_ACTOR: "ts-client" };
  execFileSync(binary, ["fleet", "add", "fleet-alpha", "agent-a", "agent-b"], { env });
  if (transport === "stdio") {
    const client = new Client({ name: "discuss-test", version: "0" });
    await client.connect(new StdioClientTransport({ command: binary, args: ["mcp"], env }));
    await discussion({ "agent-a": client, "agent-b": client }, transport);
    continue;
  }
  const tokens = {};
  for (const agent of ["agent-a", "agent-b"]) {
    tokens[agent] = execFileSync(binary, ["token", "issue", agent], { env, stdio: ["ignore", "pipe", "ignore"] })
      .toString().trim();
  }
  const server = spawn(binary, ["serve", "--listen", "127.0.0.1:0"], { env, stdio: ["ignore", "ignore", "pipe"] });
  const url = await new Promise((resolve, reject) => {
    let seen = "";
    server.stderr.on("data", (chunk) => {
      seen += chunk;
      // The whole line: a URL cut at a chunk's end is another address.
      const found = seen.match(/listening on (http:\/\/\S+)\n/);
      if (found) resolve(found[1]);
    });
    server.on("exit", () => reject(new Error(`serve ended: ${seen}`)));
  });
  const clients = {};
  for (const agent of ["agent-a", "agent-b"]) {
    clients[agent] = new Client({ name: `discuss-test-${agent}`, version: "0" });
    await clients[agent].connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${tokens[agent]}` } },
    }));
  }
  await discussion(clients, transport);
  const spoof = new Client({ name: "spoof", version: "0" });
  await spoof.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${tokens["agent-b"]}` } },
  }));
  const spoofed = await spoof.callTool({ name: "ask_peer", arguments: {
    from_agent_id: "agent-a", to_agent_id: "agent-b", fleet_id: "fleet-alpha", payload: "{}" } });
  assert.equal(spoofed.isError, true);
  assert.equal(spoofed.structuredContent.error.code, "agent_mismatch");
  await spoof.close();
  const exited = new Promise((resolve) => server.on("exit", (code) => resolve(code)));
  server.kill("SIGTERM");
  assert.equal(await exited, 0);
}
rmSync(folder, { recursive: true });
