"""Live sessions, measured: from `wake --into` to the pointer on the pane's
screen, from `discuss turn` to the pickup recorded (the process's end: its
write is durable then), and from a reservation to its push to a connected
MCP session. p50/p99 over N turns, side by side in one run; the quiet wait
(`--quiet-ms`) is measured apart, as the cost of `--quiet-ms 500` over 0.

Usage: python bench/live.py DISCUSS_BINARY [TURNS]
Needs tmux; the push is measured when the `mcp` package (the official
Python SDK) can be imported, else said to be left out.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def report(name, seconds):
    ms = [s * 1000 for s in seconds]
    print(f"{name}: p50 {percentile(ms, 50):.1f} ms, p99 {percentile(ms, 99):.1f} ms "
          f"over {len(ms)}")


def answer(env, turn):
    """Answers a turn with the command `turn` printed, closing it."""
    subprocess.run([*turn["reply_argv"], "--close"], env=env, input='{"body":"ok"}',
                   check=True, capture_output=True, text=True)


def main():
    binary = os.path.realpath(sys.argv[1])
    turns = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    with tempfile.TemporaryDirectory() as folder:
        env = {"PATH": f"{os.path.dirname(binary)}:/usr/bin:/bin",
               "DISCUSS_LEDGER": f"{folder}/ledger.jsonl", "DISCUSS_ACTOR": "bench",
               "HOME": folder, "TERM": "xterm"}
        socket = f"{folder}/tmux.sock"

        def cli(*args):
            done = subprocess.run([binary, "--json", *args], env=env, check=True,
                                  capture_output=True, text=True)
            return json.loads(done.stdout) if done.stdout.strip() else None

        def tmux(*args):
            return subprocess.run(["tmux", "-S", socket, *args], env=env, check=True,
                                  capture_output=True, text=True).stdout

        cli("fleet", "add", "f", "a", "b")
        cli("quota", "set", "100000", "--agent", "b")
        # The server keeps what it inherits open: no pipe to wait on.
        subprocess.run(["tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s",
                        "bench", "-x", "200", "-y", "50", "cat >/dev/null"], env=env,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        to_screen, woken, picked, quiet_cost = [], [], [], []
        for n in range(turns):
            asked = cli("ask", "--from", "a", "--to", "b", "--fleet", "f",
                        "--payload", '{"body":"x"}')
            dsc = asked["discussion_id"]
            quiet = "500" if n % 10 == 9 else "0"
            started = time.monotonic()
            wake = subprocess.Popen([binary, "--json", "wake", "--agent", "b", "--discussion",
                                     dsc, "--expected-head", asked["root_message_id"], "--into",
                                     "tmux:bench", "--tmux-socket", socket, "--quiet-ms", quiet],
                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            seen = None
            while seen is None:
                if dsc in tmux("capture-pane", "-p", "-J", "-t", "bench"):
                    seen = time.monotonic() - started
                elif wake.poll() is not None and wake.returncode != 0:
                    raise SystemExit(wake.stderr.read().decode())
            wake.wait()
            done = time.monotonic() - started
            assert wake.returncode == 0, wake.stderr.read()
            if quiet == "0":
                to_screen.append(seen)
                woken.append(done)
            else:
                quiet_cost.append(seen)
            tmux("clear-history", "-t", "bench")
            tmux("send-keys", "-t", "bench", "C-l")
            started = time.monotonic()
            turn = cli("turn", "--agent", "b")
            picked.append(time.monotonic() - started)
            answer(env, turn)
        tmux("kill-server")
        report("wake --into (--quiet-ms 0) to the pointer on screen", to_screen)
        report("wake --into (--quiet-ms 0), the whole command (Enter 150 ms after)", woken)
        report("wake --into --quiet-ms 500 to the pointer on screen (the quiet wait apart)",
               quiet_cost)
        report("discuss turn to the pickup recorded", picked)
        try:
            import mcp  # noqa: F401
        except ImportError:
            print("push to an MCP session: left out (no mcp package to import)")
            return
        asyncio.run(pushes(binary, env, cli, max(10, turns // 5)))


async def pushes(binary, env, cli, turns):
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    logged = asyncio.Queue()

    async def on_log(params):
        await logged.put(time.monotonic())

    params = StdioServerParameters(command=binary, args=["mcp", "--agent", "b"], env=env)
    latencies = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, logging_callback=on_log) as session:
            await session.initialize()
            for _ in range(turns):
                asked = cli("ask", "--from", "a", "--to", "b", "--fleet", "f",
                            "--payload", '{"body":"x"}')
                started = time.monotonic()
                cli("wake", "--agent", "b", "--discussion", asked["discussion_id"],
                    "--expected-head", asked["root_message_id"])
                latencies.append(await asyncio.wait_for(logged.get(), 5) - started)
                answer(env, cli("turn", "--agent", "b"))
    report("reservation to its push to a connected MCP session (the server looks at the ledger's version every 50 ms)",
           latencies)


if __name__ == "__main__":
    main()
