"""`harness mcp` against the official Python MCP SDK (mcp==2.3.0), in both
protocol eras: the `initialize` handshake ("legacy", 2025-11-25) and the
stateless 2026-07-28 revision ("auto": `server/discover`, then per-request
metadata).

    python check_python.py PATH/TO/harness

Every check runs once per era, each against a server of its own over a
fresh temporary workspace, and results are compared whole with what
`harness call` prints for the same call (the in-process result). The last
line is "N passed, N failed"; the exit code is 1 when a check failed.
The servers run with `--no-sandbox`: these checks are of the protocol, and
read the host's process ids of what bash starts (the sandbox has its own
tests, tests/integration/sandbox.rs).
"""

import asyncio
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

HARNESS = os.path.abspath(sys.argv[1])
TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"]
ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}
# A 2x1 PNG (red, blue), as read sends it back unchanged.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAEElEQVR4nGP4z8DAwMDAAAAN"
    "AgGBJbkpAAAAAElFTkSuQmCC"
)
HINTS = {
    "read": (True, False, True, False),
    "grep": (True, False, True, False),
    "find": (True, False, True, False),
    "ls": (True, False, True, False),
    "write": (False, True, True, False),
    "edit": (False, True, False, False),
    "bash": (False, True, False, True),
}


def harness_call(workspace: Path, tool: str, args: dict) -> dict:
    """The in-process result, as `harness call` prints it."""
    out = subprocess.run(
        [HARNESS, "call", "--no-sandbox", tool, json.dumps(args), "--cwd", str(workspace)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def as_harness(result) -> dict:
    """An MCP CallToolResult in `harness call`'s shape."""
    content = []
    for block in result.content:
        if block.type == "text":
            content.append({"type": "text", "text": block.text})
        elif block.type == "image":
            content.append({"type": "image", "data": block.data, "mime_type": block.mime_type})
        else:
            content.append({"type": block.type})
    meta = result.meta or {}
    return {
        "is_error": result.is_error,
        "content": content,
        "details": meta.get("harness/details"),
    }


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def wait_until(condition, what: str, timeout: float = 10.0):
    """Polls `condition` until it holds; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def expect(actual, wanted, what: str):
    if actual != wanted:
        raise AssertionError(f"{what}:\n  expected: {wanted!r}\n  actual:   {actual!r}")


class Session:
    """A workspace and a server over it, for one check."""

    def __init__(self, mode: str):
        self.mode = mode
        self.root = Path(tempfile.mkdtemp(prefix="harness-mcp-py-"))
        self.workspace = self.root / "ws"
        self.workspace.mkdir()

    def params(self, *extra: str) -> StdioServerParameters:
        return StdioServerParameters(
            command=HARNESS, args=["mcp", "--no-sandbox", "--cwd", str(self.workspace), *extra]
        )

    def client(self, params: StdioServerParameters | None = None) -> Client:
        return Client(params or self.params(), mode=self.mode)

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)


async def check_the_era_and_the_tool_list(s: Session):
    async with s.client() as client:
        expect(client.protocol_version, ERAS[s.mode], "negotiated protocol version")
        listed = await client.list_tools()
    reference = json.loads(
        subprocess.run([HARNESS, "tools", "--json"], check=True, capture_output=True).stdout
    )
    expect([t.name for t in listed.tools], TOOLS, "tool names in prompt order")
    for tool, ref in zip(listed.tools, reference):
        expect(
            (tool.name, tool.description, tool.input_schema),
            (ref["name"], ref["description"], ref["parameters"]),
            f"definition of {tool.name} against `harness tools --json`",
        )
        a = tool.annotations
        expect(
            (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint),
            HINTS[tool.name],
            f"hints of {tool.name}",
        )
        expect(tool.output_schema, None, f"{tool.name} has no output schema")
        expect("$schema" in tool.input_schema, False, f"{tool.name} schema without $schema")


async def check_read_text_image_missing_outside_and_invalid(s: Session):
    (s.workspace / "notes.txt").write_text("one\ntwo\n")
    (s.workspace / "pixel.png").write_bytes(PNG)
    (s.root / "secret.txt").write_text("outside\n")
    calls = [
        ("read", {"path": "notes.txt"}, False),
        ("read", {"path": "pixel.png"}, False),
        ("read", {"path": "missing.txt"}, True),
        ("read", {"path": "../secret.txt"}, True),
        ("read", {"path": str(s.root / "secret.txt")}, True),
        ("read", {"path": 5}, True),
        ("edit", {"path": "notes.txt", "edits": [{"oldText": "one"}]}, True),
    ]
    async with s.client() as client:
        for tool, args, is_error in calls:
            result = await client.call_tool(tool, args)
            got = as_harness(result)
            expect(got, harness_call(s.workspace, tool, args), f"{tool} {args} against harness call")
            expect(got["is_error"], is_error, f"isError of {tool} {args}")
            expect(result.structured_content, None, "no structuredContent")
    async with s.client() as client:
        read_png = await client.call_tool("read", {"path": "pixel.png"})
    image = [b for b in read_png.content if b.type == "image"]
    expect(
        [(b.mime_type, base64.b64decode(b.data)) for b in image],
        [("image/png", PNG)],
        "the PNG as one image block",
    )
    async with s.client() as client:
        invalid = await client.call_tool("read", {"path": 5})
    text = invalid.content[0].text
    expect(
        text.splitlines()[:2],
        ['Validation failed for tool "read":', "  - /path: expected a string, received number 5"],
        "the validation error names the field",
    )


async def check_an_unknown_tool_is_a_json_rpc_error(s: Session):
    async with s.client() as client:
        try:
            await client.call_tool("nope", {})
        except MCPError as err:
            expect(err.code, -32602, "error code")
            expect(
                err.message,
                'Tool "nope" not found. Available tools: read, bash, edit, write, grep, find, ls. '
                "Call one of those by its exact name.",
                "error message",
            )
            return
    raise AssertionError("calling an unknown tool raised no MCPError")


async def check_an_edit_lands_on_disk(s: Session):
    (s.workspace / "a.py").write_text("x = 1\ny = 2\n")
    async with s.client() as client:
        result = await client.call_tool(
            "edit", {"path": "a.py", "edits": [{"oldText": "y = 2", "newText": "y = 3"}]}
        )
    expect(result.is_error, False, "isError")
    expect((s.workspace / "a.py").read_text(), "x = 1\ny = 3\n", "the file after the edit")


async def check_ten_concurrent_writes_and_ten_concurrent_edits_of_one_file(s: Session):
    lines = [f"line {i}: old" for i in range(10)]
    (s.workspace / "shared.txt").write_text("\n".join(lines) + "\n")
    async with s.client() as client:
        writes = [
            client.call_tool("write", {"path": f"dir/f{i}.txt", "content": f"file {i}\n"})
            for i in range(10)
        ]
        edits = [
            client.call_tool(
                "edit",
                {
                    "path": "shared.txt",
                    "edits": [{"oldText": f"line {i}: old", "newText": f"line {i}: new"}],
                },
            )
            for i in range(10)
        ]
        results = await asyncio.gather(*writes, *edits)
    expect([r.is_error for r in results], [False] * 20, "isError of the 20 calls")
    expect(
        [(s.workspace / f"dir/f{i}.txt").read_text() for i in range(10)],
        [f"file {i}\n" for i in range(10)],
        "the ten written files",
    )
    expect(
        (s.workspace / "shared.txt").read_text(),
        "".join(f"line {i}: new\n" for i in range(10)),
        "the file after ten edits",
    )


async def check_bash_with_a_progress_token_sends_progress(s: Session):
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, message))

    command = "for i in 1 2 3 4 5 6; do echo step$i; sleep 0.3; done"
    async with s.client() as client:
        result = await client.call_tool("bash", {"command": command}, progress_callback=on_progress)
        expect(result.is_error, False, "isError")
        expect(result.content[0].text, "".join(f"step{i}\n" for i in range(1, 7)), "the output")
    if len(seen) < 2:
        raise AssertionError(f"expected at least 2 progress notifications, got {seen!r}")
    numbers = [p for p, _ in seen]
    expect(numbers, sorted(set(numbers)), "progress strictly increasing")
    expect(all(m and m.startswith("step1\n") for _, m in seen), True, f"messages carry the tail: {seen!r}")


async def check_a_cancelled_long_bash_is_killed_and_the_server_goes_on(s: Session):
    pid_file = s.workspace / "sleep.pid"
    async with s.client() as client:
        call = asyncio.ensure_future(
            client.call_tool("bash", {"command": "sleep 1000 & echo $! > sleep.pid; wait"})
        )
        await wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), "sleep.pid")
        pid = int(pid_file.read_text())
        expect(pid_alive(pid), True, "the command runs")
        call.cancel()
        try:
            await call
        except asyncio.CancelledError:
            pass
        await wait_until(lambda: not pid_alive(pid), f"process {pid} to be killed")
        after = await client.call_tool("ls", {})
        expect(as_harness(after)["content"], [{"type": "text", "text": "sleep.pid"}], "ls after the cancel")


async def check_stdin_eof_ends_the_server_with_nothing_left_behind(s: Session):
    code_file = s.root / "exit.code"
    # The server's exit status, written by a shell around it (the SDK
    # kills the whole process group if the server has not exited two
    # seconds after its stdin closed; then no status is written).
    wrapper = StdioServerParameters(
        command="/bin/sh",
        args=[
            "-c",
            f'"$0" mcp --no-sandbox --cwd "$1"; echo $? > "$2"',
            HARNESS,
            str(s.workspace),
            str(code_file),
        ],
    )
    async with s.client(wrapper) as client:
        result = await client.call_tool("bash", {"command": "sleep 1000 & echo $!"})
        pid = int(result.content[0].text.strip())
        expect(pid_alive(pid), True, "the background command runs")
        started = time.monotonic()
    took = time.monotonic() - started
    expect(code_file.read_text(), "0\n", "the server's exit status after stdin closed")
    if took >= 2.0:
        raise AssertionError(f"the server took {took:.2f}s to exit after stdin closed")
    await wait_until(lambda: not pid_alive(pid), f"background process {pid} to be gone")


CHECKS = [
    check_the_era_and_the_tool_list,
    check_read_text_image_missing_outside_and_invalid,
    check_an_unknown_tool_is_a_json_rpc_error,
    check_an_edit_lands_on_disk,
    check_ten_concurrent_writes_and_ten_concurrent_edits_of_one_file,
    check_bash_with_a_progress_token_sends_progress,
    check_a_cancelled_long_bash_is_killed_and_the_server_goes_on,
    check_stdin_eof_ends_the_server_with_nothing_left_behind,
]


async def main() -> int:
    passed = failed = 0
    for mode in ERAS:
        for check in CHECKS:
            name = f"python {mode} {check.__name__.removeprefix('check_')}"
            session = Session(mode)
            try:
                await asyncio.wait_for(check(session), timeout=60)
            except Exception:
                failed += 1
                print(f"FAIL {name}")
                traceback.print_exc(file=sys.stdout)
            else:
                passed += 1
                print(f"ok   {name}")
            finally:
                session.cleanup()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
