"""Start-up of `harness mcp`, whole process: from spawning it to the answer
of the first tools/list (after the initialize handshake), and to its exit
once its input is closed.

    python3 benches/mcp_startup.py target/release/harness [RUNS]

Prints the median, the fastest and the slowest of RUNS (default 50) runs,
in milliseconds. Standard library only.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

harness = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 50
messages = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "startup", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]
payload = "".join(json.dumps(m) + "\n" for m in messages).encode()

listed, ended = [], []
with tempfile.TemporaryDirectory() as workspace:
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(
            [harness, "mcp", "--cwd", workspace],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        proc.stdin.write(payload)
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                sys.exit("harness mcp closed its output before answering tools/list")
            if json.loads(line).get("id") == 2:
                break
        listed.append((time.perf_counter() - start) * 1000)
        proc.stdin.close()
        proc.wait()
        ended.append((time.perf_counter() - start) * 1000)
        if proc.returncode != 0:
            sys.exit(f"harness mcp exited {proc.returncode}")


def show(name, values):
    print(
        f"{name}: median {statistics.median(values):.1f} ms "
        f"(fastest {min(values):.1f}, slowest {max(values):.1f}; {len(values)} runs)"
    )


show("spawn -> tools/list answered", listed)
show("spawn -> exit after stdin closed", ended)
