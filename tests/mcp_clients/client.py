"""A whole discussion through `discuss mcp` with the official Python SDK.

Usage: python client.py DISCUSS_BINARY
Exits 0 when every check holds; any failure raises. `.ci/run` runs it with
the `mcp` package of PyPI (2.x).
"""

import asyncio
import json
import subprocess
import sys
import tempfile
from importlib.metadata import version

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def dump(result):
    return result.model_dump(by_alias=True, exclude_none=True)


async def run(binary: str, ledger: str) -> None:
    env = {"DISCUSS_LEDGER": ledger, "DISCUSS_ACTOR": "python-client"}
    subprocess.run([binary, "fleet", "add", "fleet-alpha", "agent-a", "agent-b"], env=env,
                   check=True, capture_output=True)
    params = StdioServerParameters(command=binary, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = dump(await session.initialize())
            negotiated = init.get("protocolVersion")
            assert init["serverInfo"]["name"] == "discuss", init

            tools = {t["name"]: t for t in dump(await session.list_tools())["tools"]}
            assert set(tools) == {"ask_peer", "wake_agent", "reply_discussion", "get_discussion",
                                  "list_discussions", "inbox"}, tools.keys()
            schema = tools["ask_peer"]["inputSchema"]
            assert schema["additionalProperties"] is False
            assert schema["properties"]["max_turns"]["minimum"] == 2
            # Readers need no approval; every tool's answers have a schema.
            for name, tool in tools.items():
                reader = name in ("get_discussion", "list_discussions", "inbox")
                assert tool["annotations"]["readOnlyHint"] is reader, tool
                assert tool["annotations"]["destructiveHint"] is False, tool
                assert tool["outputSchema"]["type"] == "object", tool

            async def call(name, arguments):
                result = dump(await session.call_tool(name, arguments))
                text = json.loads(result["content"][0]["text"])
                assert text == result["structuredContent"], result
                return result

            async def ok(name, arguments):
                result = await call(name, arguments)
                assert result.get("isError") is False, result
                return result["structuredContent"]

            asked = await ok("ask_peer", {
                "from_agent_id": "agent-a", "to_agent_id": "agent-b", "fleet_id": "fleet-alpha",
                "payload": json.dumps({"body": "Refactor auth module?"}), "max_turns": 4})
            dsc, head = asked["discussion_id"], asked["root_message_id"]
            for agent, kind, close in [("agent-b", "question", False),
                                       ("agent-a", "question", False),
                                       ("agent-b", "result", True)]:
                woken = await ok("wake_agent", {"agent_id": agent, "discussion_id": dsc,
                                                "expected_head_message_id": head})
                # The woken agent finds its turn in its inbox.
                row = (await ok("inbox", {"agent_id": agent}))["discussions"][0]
                assert row["live_attempt_id"] == woken["attempt"]["attempt_id"], row
                replied = await ok("reply_discussion", {
                    "agent_id": agent, "discussion_id": dsc,
                    "attempt_id": woken["attempt"]["attempt_id"], "reply_to_message_id": head,
                    "type": kind, "payload": json.dumps({"body": f"{kind} from {agent}"}),
                    "close": close})
                head = replied["message_id"]
            state = await ok("get_discussion", {"discussion_id": dsc})
            assert state["status"] == "closed" and len(state["transcript"]) == 4, state

            refused = await call("wake_agent", {"agent_id": "agent-a", "discussion_id": dsc,
                                                "expected_head_message_id": head})
            assert refused.get("isError") is True, refused
            assert refused["structuredContent"]["error"]["code"] == "discussion_terminal"
            # The session goes on after a refusal.
            assert (await ok("list_discussions", {}))["discussions"][0]["status"] == "closed"
    print(f"python mcp {version('mcp')}: protocol {negotiated}, four turns, a refusal: ok")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run(sys.argv[1], f"{folder}/ledger.jsonl"))


if __name__ == "__main__":
    main()
