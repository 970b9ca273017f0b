#!/usr/bin/env bash
# `harness` installed the ways server authors install tools, from artefacts
# built here (docs/ci.md#installing-without-a-rust-build):
#
#   1. the Python wheel: maturin (pinned in requirements.txt, in a
#      virtualenv under target/packaging/) builds it from pyproject.toml,
#      pip installs it into a fresh virtualenv with no index, and the
#      `harness` on that virtualenv's PATH runs the shipped suite;
#   2. the npm packages: packaging/npm/build.sh packs the launcher and the
#      platform package around HARNESS_BIN, npm installs both tarballs into
#      a fresh folder, and `npx harness` runs the shipped suite; a SIGTERM
#      sent to the Node launcher reaches the binary, and nothing is left
#      running.
#
# Usage: tests/packaging/run.sh PATH/TO/harness
# The wheel is built in the `dev` profile, which `cargo test` has already
# built (a release wheel is `maturin build --release`: the same packaging,
# a longer build). `cargo test` needs none of this.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
harness="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$here/../.."
root="$(pwd)"
target_dir="${CARGO_TARGET_DIR:-target}"
mkdir -p "$target_dir/packaging"
work="$(cd "$target_dir/packaging" && pwd)"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"

# shellcheck source=../mcp/pins.sh
. "$root/tests/mcp/pins.sh"

echo "== the Python wheel"
install_python "$work/maturin" "$here" "maturin"
rm -rf "$work/wheels"
"$work/maturin/bin/maturin" build --quiet --profile dev --out "$work/wheels" \
  --manifest-path "$root/Cargo.toml" >/dev/null
wheel="$(ls "$work/wheels"/coding_harness-"$version"-*.whl)"
echo "built $(basename "$wheel")"
rm -rf "$work/venv"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check --no-index \
  --find-links "$work/wheels" coding-harness
[ "$("$work/venv/bin/harness" --version)" = "harness $version" ]
"$work/venv/bin/harness" run scenarios/ -q --report "$work/wheel-report" >/dev/null
echo "pip install coding-harness: harness $version ran the shipped suite"

echo "== the npm packages"
rm -rf "$work/npm" "$work/npm-install"
packaging/npm/build.sh "$harness" "$work/npm" >/dev/null
mkdir -p "$work/npm-install"
(
  cd "$work/npm-install"
  printf '{ "name": "a-server", "private": true }\n' > package.json
  npm install --no-audit --no-fund --loglevel=error \
    "$work/npm/coding-harness-linux-x64-$version.tgz" "$work/npm/coding-harness-$version.tgz" >/dev/null
)
launcher="$work/npm-install/node_modules/.bin/harness"
[ "$("$launcher" --version)" = "harness $version" ]
"$launcher" run scenarios/ -q --report "$work/npm-report" >/dev/null
# Exit codes pass through: bad usage is 2.
code=0
"$launcher" run --no-such-flag >/dev/null 2>&1 || code=$?
[ "$code" -eq 2 ] || { echo "npx harness with a bad flag exited $code, not 2" >&2; exit 1; }
# A SIGTERM to the launcher ends the binary (harness mcp, waiting on an
# input that stays open).
fifo="$work/npm-install/stdin"
rm -f "$fifo"
mkfifo "$fifo"
exec 7<>"$fifo"
"$launcher" mcp --cwd "$work/npm-install" <&7 >/dev/null 2>&1 &
node_pid=$!
binary="$work/npm-install/node_modules/coding-harness-linux-x64/bin/harness"
# Whether a process runs `$binary mcp --cwd …` (read from /proc: no procps
# needed).
running() {
  local p
  for p in /proc/[0-9]*; do
    [ "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" = "$binary mcp --cwd $work/npm-install " ] && return 0
  done
  return 1
}
export -f running
export binary work
if ! timeout 10 bash -c "until running; do sleep 0.05; done"; then
  echo "the launcher did not start $binary" >&2; exit 1
fi
kill -TERM "$node_pid"
code=0
wait "$node_pid" || code=$?
exec 7>&-
rm -f "$fifo"
if running; then
  echo "harness mcp still runs after the launcher got SIGTERM" >&2; exit 1
fi
echo "npm install coding-harness: harness $version ran the shipped suite; SIGTERM passed on (launcher exit $code)"
