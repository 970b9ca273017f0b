#!/usr/bin/env bash
# The official MCP conformance suite's server scenarios against
# `harness mcp --http`: usage `tests/mcp/conformance/server.sh HARNESS_BIN`.
#
# Starts the server on a free port in a copy of fixture/ (a small workspace),
# waits (at most 30 s) for the URL it prints on standard error, runs every
# server scenario with server-expected-failures.yml as the baseline, prints
# one line per scenario (pass or fail, and whether that was expected), stops
# the server with SIGTERM (it must exit 0 within 10 s) and exits non-zero on
# any unexpected result: a scenario of a feature harness offers that fails,
# or one listed as expected to fail that passes.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
harness="$(cd "$(dirname "${1:?usage: server.sh HARNESS_BIN}")" && pwd)/$(basename "$1")"
# shellcheck source=install.sh
. "$here/install.sh"

work="$(mktemp -d)"
[ -n "${KEEP:-}" ] && echo "server.sh: keeping $work" >&2
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

cp -R "$here/fixture" "$work/workspace"
mkfifo "$work/stderr"
"$harness" mcp --http 127.0.0.1:0 --cwd "$work/workspace" 2>"$work/stderr" &
server_pid=$!
# The first line on standard error names the URL; the rest goes to a file.
exec 3<"$work/stderr"
if ! IFS= read -r -t 30 first <&3; then
  echo "server.sh: harness mcp --http said nothing within 30 s" >&2
  exit 1
fi
cat <&3 >"$work/server.log" &
url="${first#harness mcp: serving on }"
case "$url" in
  http://127.0.0.1:*/mcp) ;;
  *) echo "server.sh: unexpected first line from harness mcp: $first" >&2; exit 1 ;;
esac

status=0
timeout 600 conformance server --url "$url" --suite all -o "$work/results" \
  --expected-failures "$here/server-expected-failures.yml" >"$work/suite.log" 2>&1 || status=$?

# The table: each scenario, its result (fail when a check failed, warn when
# one warned and none failed: the suite's baseline counts both as not
# passing), and what was expected; from the checks.json of each scenario.
unexpected=0
node - "$work/results" "$here/server-expected-failures.yml" >"$work/table" <<'JS' || unexpected=1
const fs = require("fs");
const path = require("path");
const [results, baseline] = process.argv.slice(2);
const expected = new Set(
  fs.readFileSync(baseline, "utf8").split("\n")
    .map((line) => /^  - ([a-z0-9-]+)/.exec(line)).filter(Boolean).map((m) => m[1]));
const rows = [];
for (const dir of fs.readdirSync(results).sort()) {
  const m = /^server-(.+)-\d{4}-\d\d-\d\dT/.exec(dir);
  if (!m) continue;
  const checks = JSON.parse(fs.readFileSync(path.join(results, dir, "checks.json"), "utf8"));
  const statuses = checks.map((check) => check.status);
  const result = statuses.includes("FAILURE") ? "fail" : statuses.includes("WARNING") ? "warn" : "pass";
  rows.push([m[1], result, expected.has(m[1]) ? "fail" : "pass"]);
}
let bad = rows.length === 0;
console.log("scenario".padEnd(32) + " result expected");
for (const [name, result, want] of rows) {
  const ok = (result === "pass") === (want === "pass");
  if (!ok) bad = true;
  console.log(name.padEnd(32) + " " + result.padEnd(6) + " " + want + (ok ? "" : "  UNEXPECTED"));
}
process.exit(bad ? 1 : 0);
JS
cat "$work/table"
if ! grep -q '^server-initialize ' "$work/table"; then
  echo "server.sh: the suite ran no scenario:" >&2
  tail -40 "$work/suite.log" >&2
  unexpected=1
fi

kill -TERM "$server_pid"
if ! timeout 10 tail --pid="$server_pid" -f /dev/null; then
  echo "server.sh: harness mcp --http did not end within 10 s of SIGTERM" >&2
  exit 1
fi
server_status=0
wait "$server_pid" || server_status=$?
server_pid=""
if [ "$server_status" != 0 ]; then
  echo "server.sh: harness mcp --http exited with $server_status after SIGTERM" >&2
  cat "$work/server.log" >&2
  exit 1
fi
if [ "$status" != 0 ] || [ "$unexpected" != 0 ]; then
  echo "server.sh: unexpected conformance results (suite exit $status)" >&2
  exit 1
fi
