"""`harness record` in front of a real server, driven by the official Python
MCP SDK (mcp==2.3.0): the client must see exactly what the server answers,
and the scenario written must replay against the server with no drift.

    python check_record.py PATH/TO/harness OUT_DIR

The same session runs twice, once straight to `mcp-server-everything`
(from PATH) and once through `harness record -o OUT_DIR --`, and every
answer (results, progress, errors) is compared whole. A call cancelled
mid-way passes the cancellation through (the server goes on serving).
Then `harness run OUT_DIR` must pass with every call `same`. The last line
is "N passed, N failed"; the exit code is 1 when a check failed.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

HARNESS = os.path.abspath(sys.argv[1])
OUT = Path(sys.argv[2]).resolve()


def as_dict(result) -> dict:
    content = []
    for block in result.content:
        item = {"type": block.type}
        for field in ("text", "data", "mime_type", "uri", "name"):
            if getattr(block, field, None) is not None:
                item[field] = getattr(block, field)
        content.append(item)
    return {
        "is_error": result.is_error,
        "content": content,
        "structured_content": result.structured_content,
    }


async def session(params: StdioServerParameters) -> list:
    """One session; what the client saw of each exchange, in order."""
    seen = []
    async with Client(params, mode="legacy") as client:
        seen.append(as_dict(await client.call_tool("echo", {"message": "hello ${HOME}"})))
        # A slow call and a quick one sent together: the quick one is sent
        # while the slow one is in flight, so they are one parallel step.
        pair = await asyncio.gather(
            client.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 1}),
            client.call_tool("get-sum", {"a": 40, "b": 2}),
        )
        seen.extend(as_dict(r) for r in pair)
        seen.append(as_dict(await client.call_tool("get-sum", {"a": 2, "b": 3})))
        seen.append(as_dict(await client.call_tool("get-tiny-image", {})))
        seen.append(as_dict(await client.call_tool("get-sum", {"a": "two", "b": 3})))
        try:
            await client.call_tool("no-such-tool", {})
            seen.append("no error")
        except MCPError as err:
            seen.append({"jsonrpc_error": err.error.code, "message": err.error.message})
        progress = []

        async def on_progress(done, total, message):
            progress.append((done, total, message))

        seen.append(
            as_dict(
                await client.call_tool(
                    "trigger-long-running-operation",
                    {"duration": 1, "steps": 2},
                    progress_callback=on_progress,
                )
            )
        )
        seen.append({"progress": progress})
        started = asyncio.Event()

        async def on_first(done, total, message):
            started.set()

        slow = asyncio.ensure_future(
            client.call_tool(
                "trigger-long-running-operation",
                {"duration": 30, "steps": 30},
                progress_callback=on_first,
            )
        )
        await asyncio.wait_for(started.wait(), 20)
        slow.cancel()
        try:
            await slow
        except asyncio.CancelledError:
            pass
        seen.append(as_dict(await client.call_tool("echo", {"message": "after the cancel"})))
    return seen


failed = 0
passed = 0


def check(name: str, ok: bool, detail: str = ""):
    global failed, passed
    if ok:
        passed += 1
        print(f"ok   record {name}")
    else:
        failed += 1
        print(f"FAIL record {name}\n{detail}")


async def main():
    direct = await session(StdioServerParameters(command="mcp-server-everything", args=[]))
    relayed = await session(
        StdioServerParameters(
            command=HARNESS, args=["record", "-o", str(OUT), "--", "mcp-server-everything"]
        )
    )
    check(
        "the_client_sees_what_the_server_answers",
        relayed == direct,
        f"  direct:  {json.dumps(direct)}\n  relayed: {json.dumps(relayed)}",
    )
    scenario = OUT / "session.yaml"
    check("a_scenario_is_written", scenario.is_file(), f"  {sorted(p.name for p in OUT.iterdir())}")
    if not scenario.is_file():
        return
    text = scenario.read_text()
    check(
        "the_cancelled_and_the_unknown_calls_are_listed_not_replayed",
        "the client cancelled it" in text
        and "the server does not list this tool" in text
        and "skipped: 2" in text,
        text,
    )
    check("parallel_calls_are_a_parallel_step", "- parallel:" in text, text)
    report = Path(tempfile.mkdtemp(prefix="harness-record-report-"))
    run = subprocess.run(
        [HARNESS, "run", str(OUT), "--report", str(report)], capture_output=True, text=True
    )
    check("the_replay_passes", run.returncode == 0, run.stdout + run.stderr)
    summary = json.loads((report / "run.json").read_text())
    replay = summary.get("replay") or {}
    figures = {k: replay.get(k) for k in ("calls", "same", "differs", "error_agree", "skipped")}
    check(
        "the_replay_has_no_drift",
        figures == {"calls": 8, "same": 8, "differs": 0, "error_agree": 8, "skipped": 2},
        f"  {json.dumps(replay)}",
    )


try:
    asyncio.run(main())
except Exception:
    failed += 1
    traceback.print_exc()
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
