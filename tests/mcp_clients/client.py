"""A whole discussion through `discuss mcp` (stdio) and `discuss serve`
(streamable HTTP, each agent with its own token) with the official Python
SDK.

Usage: python client.py DISCUSS_BINARY
Exits 0 when every check holds; any failure raises. `.ci/run` runs it with
the `mcp` package of PyPI (2.x).
"""

import asyncio
import json
import subprocess
import sys
import tempfile
import threading
from importlib.metadata import version

from contextlib import asynccontextmanager

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


def dump(result):
    return result.model_dump(by_alias=True, exclude_none=True)


@asynccontextmanager
async def over_stdio(binary, env, agent):
    params = StdioServerParameters(command=binary, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            yield session


@asynccontextmanager
async def over_http(url, token):
    headers = {"Authorization": f"Bearer {token}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                yield session


async def discussion(connect, transport: str) -> None:
    """Four turns and a refusal; `connect(agent)` opens a session acting
    for that agent (stdio: one server for all)."""
    sessions = {}
    async with connect("agent-a") as session_a, connect("agent-b") as session_b:
        sessions = {"agent-a": session_a, "agent-b": session_b}
        init = {}
        for session in sessions.values():
            init = dump(await session.initialize())
            assert init["serverInfo"]["name"] == "discuss", init
        negotiated = init.get("protocolVersion")
        session = session_a

        tools = {t["name"]: t for t in dump(await session.list_tools())["tools"]}
        assert set(tools) == {"ask_peer", "wake_agent", "reply_discussion", "get_discussion",
                              "list_discussions", "inbox", "take_turn"}, tools.keys()
        schema = tools["ask_peer"]["inputSchema"]
        assert schema["additionalProperties"] is False
        assert schema["properties"]["max_turns"]["minimum"] == 2
        # Readers need no approval; every tool's answers have a schema.
        for name, tool in tools.items():
            reader = name in ("get_discussion", "list_discussions", "inbox")
            # take_turn records the pickup: it writes.
            assert tool["annotations"]["readOnlyHint"] is reader, tool
            assert tool["annotations"]["destructiveHint"] is False, tool
            assert tool["outputSchema"]["type"] == "object", tool

        async def call(agent, name, arguments):
            result = dump(await sessions[agent].call_tool(name, arguments))
            text = json.loads(result["content"][0]["text"])
            assert text == result["structuredContent"], result
            return result

        async def ok(agent, name, arguments):
            result = await call(agent, name, arguments)
            assert result.get("isError") is False, result
            return result["structuredContent"]

        asked = await ok("agent-a", "ask_peer", {
            "from_agent_id": "agent-a", "to_agent_id": "agent-b", "fleet_id": "fleet-alpha",
            "payload": json.dumps({"body": "Refactor auth module?"}), "max_turns": 4})
        dsc, head = asked["discussion_id"], asked["root_message_id"]
        for agent, kind, close in [("agent-b", "question", False),
                                   ("agent-a", "question", False),
                                   ("agent-b", "result", True)]:
            woken = await ok(agent, "wake_agent", {"agent_id": agent, "discussion_id": dsc,
                                                   "expected_head_message_id": head})
            # The woken agent finds its turn in its inbox.
            row = (await ok(agent, "inbox", {"agent_id": agent}))["discussions"][0]
            assert row["live_attempt_id"] == woken["attempt"]["attempt_id"], row
            replied = await ok(agent, "reply_discussion", {
                "agent_id": agent, "discussion_id": dsc,
                "attempt_id": woken["attempt"]["attempt_id"], "reply_to_message_id": head,
                "type": kind, "payload": json.dumps({"body": f"{kind} from {agent}"}),
                "close": close})
            head = replied["message_id"]
        state = await ok("agent-a", "get_discussion", {"discussion_id": dsc})
        assert state["status"] == "closed" and len(state["transcript"]) == 4, state

        refused = await call("agent-a", "wake_agent", {"agent_id": "agent-a", "discussion_id": dsc,
                                                       "expected_head_message_id": head})
        assert refused.get("isError") is True, refused
        assert refused["structuredContent"]["error"]["code"] == "discussion_terminal"
        if transport == "http":
            # A token acts as its agent alone.
            spoofed = await call("agent-b", "ask_peer", {
                "from_agent_id": "agent-a", "to_agent_id": "agent-b", "fleet_id": "fleet-alpha",
                "payload": "{}"})
            assert spoofed["structuredContent"]["error"]["code"] == "agent_mismatch", spoofed
        # The session goes on after a refusal.
        assert (await ok("agent-a", "list_discussions", {}))["discussions"][0]["status"] == "closed"
    print(f"python mcp {version('mcp')} over {transport}: protocol {negotiated}, "
          "four turns, a refusal: ok")


async def pushes(binary, env) -> None:
    """A turn reserved for agent-b reaches its connected session (`mcp
    --agent agent-b`) within a second, as a log message at level notice
    and on Claude Code's channel: the pointer, never the body. take_turn
    then records the pickup."""
    import time
    from pydantic import BaseModel
    from mcp.client.extension import NotificationBinding

    class Channel(BaseModel):
        content: str
        meta: dict[str, str]

    logged, channel = asyncio.Queue(), asyncio.Queue()

    async def on_log(params):
        await logged.put(params)

    async def on_channel(params):
        await channel.put(params)

    def cli(*args):
        done = subprocess.run([binary, "--json", *args], env=env, check=True,
                              capture_output=True, text=True)
        return json.loads(done.stdout) if done.stdout.strip() else None

    secret = "the body is never pushed"
    params = StdioServerParameters(command=binary, args=["mcp", "--agent", "agent-b"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, logging_callback=on_log, notification_bindings=[
                NotificationBinding(method="notifications/claude/channel", params_type=Channel,
                                    handler=on_channel)]) as session:
            init = dump(await session.initialize())
            assert "claude/channel" in init["capabilities"]["experimental"], init
            asked = cli("ask", "--from", "agent-a", "--to", "agent-b", "--fleet", "fleet-alpha",
                        "--payload", json.dumps({"body": secret}))
            dsc = asked["discussion_id"]
            started = time.monotonic()
            woken = cli("wake", "--agent", "agent-b", "--discussion", dsc,
                        "--expected-head", asked["root_message_id"])
            attempt = woken["attempt"]["attempt_id"]
            log = await asyncio.wait_for(logged.get(), 5)
            latency = time.monotonic() - started
            assert latency < 1.5, latency
            assert log.level == "notice", log
            assert log.data["attempt_id"] == attempt and log.data["state"] == "reserved", log
            assert f"turn 2 of {dsc} is yours" in log.data["pointer"], log
            pushed = await asyncio.wait_for(channel.get(), 5)
            assert pushed.meta["attempt_id"] == attempt and pushed.meta["turn"] == "2", pushed
            assert pushed.meta["discussion_id"] == dsc, pushed
            assert "is yours" in pushed.content, pushed
            assert secret not in json.dumps(log.data) and secret not in pushed.content
            taken = dump(await session.call_tool("take_turn", {}))
            assert taken.get("isError") is False, taken
            turn = taken["structuredContent"]
            assert turn["attempt"]["state"] == "started" and turn["head"]["body"]["body"] == secret
            assert turn["reply_argv"][-4:] == ["--type", "result", "--payload-file", "-"], turn
    print(f"python mcp {version('mcp')}: a reserved turn pushed in {latency * 1000:.0f} ms "
          "(log message and channel), take_turn: ok")


async def run(binary: str, folder: str) -> None:
    for transport in ("stdio", "http"):
        env = {"DISCUSS_LEDGER": f"{folder}/{transport}.jsonl", "DISCUSS_ACTOR": "python-client"}
        subprocess.run([binary, "fleet", "add", "fleet-alpha", "agent-a", "agent-b"], env=env,
                       check=True, capture_output=True)
        if transport == "stdio":
            await discussion(lambda agent: over_stdio(binary, env, agent), transport)
            await pushes(binary, env)
            continue
        tokens = {agent: subprocess.run([binary, "token", "issue", agent], env=env, check=True,
                                        capture_output=True, text=True).stdout.strip()
                  for agent in ("agent-a", "agent-b")}
        server = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0"], env=env,
                                  stderr=subprocess.PIPE, text=True)
        try:
            listening = server.stderr.readline().strip()
            assert listening.startswith("listening on http://"), listening
            # Its log lines are read as they come, so it never waits on a full pipe.
            threading.Thread(target=server.stderr.read, daemon=True).start()
            url = listening.removeprefix("listening on ") + "/mcp"
            await discussion(lambda agent: over_http(url, tokens[agent]), transport)
        finally:
            server.terminate()
            assert server.wait(timeout=15) == 0


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run(sys.argv[1], folder))


if __name__ == "__main__":
    main()
