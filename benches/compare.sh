#!/usr/bin/env bash
# Whole-process comparison of `harness call grep` / `harness call find` with
# ripgrep and fd on a real tree (benches/README.md, "compare.sh").
#
#   benches/compare.sh [ROUNDS]
#
# The corpus is a copy of the cargo registry sources ($CARGO_HOME/registry/src,
# real code every machine that built this project has), made once into
# $BENCH_CORPUS (default: target/bench-corpus) so that its layout stays the
# same during a run; delete it to take a fresh copy. rg and fd come from
# PATH, else from $BENCH_TOOLS/bin (default: target/bench-tools), else they
# are installed there with `cargo install --root`. The tests never need them.
# $HARNESS names a harness binary to use instead of building this checkout.
#
# Each case runs the pair alternately, ROUNDS times (default 21), after one
# warm-up run each, and prints the median wall time of each side and the
# ratio harness / other. The flags give both sides the same rules: hidden
# files searched, ignore files applied outside git repositories too
# (--no-require-git), symlinks not followed; rg runs unsorted (its fastest
# mode), `harness` sorts its output.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds="${1:-21}"
case "$rounds" in
  '' | *[!0-9]*) echo "ROUNDS must be a number, not '$rounds'" >&2; exit 2 ;;
esac
target_dir="${CARGO_TARGET_DIR:-target}"
corpus="${BENCH_CORPUS:-$target_dir/bench-corpus}"
tools="${BENCH_TOOLS:-$target_dir/bench-tools}"
registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"

# A tool from PATH, else from $tools/bin, else installed there.
tool() {
  local bin="$1" crate="$2"
  if command -v "$bin" >/dev/null 2>&1; then
    command -v "$bin"
  elif [ -x "$tools/bin/$bin" ]; then
    echo "$tools/bin/$bin"
  else
    echo "installing $crate into $tools" >&2
    cargo install --quiet --locked --root "$tools" "$crate" >&2
    echo "$tools/bin/$bin"
  fi
}
rg="$(tool rg ripgrep)"
fd="$(tool fd fd-find)"

if [ ! -d "$corpus" ]; then
  if [ ! -d "$registry" ]; then
    echo "no cargo registry sources at $registry to copy; set BENCH_CORPUS" >&2
    exit 2
  fi
  echo "copying $registry to $corpus" >&2
  mkdir -p "$corpus"
  cp -a "$registry/." "$corpus/"
fi

# $HARNESS: a binary built already (e.g. of another commit); else this one.
if [ -n "${HARNESS:-}" ]; then
  harness="$HARNESS"
else
  cargo build --release --quiet
  harness="$target_dir/release/harness"
fi

echo "corpus: $corpus ($(du -sh "$corpus" | cut -f1), $("$fd" --hidden --no-require-git --type f . "$corpus" | wc -l) files searched)"
echo "tools:  $("$rg" --version | head -1), $("$fd" --version)"
echo "load:   $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min); $(nproc) cores"
echo "rounds: $rounds, alternating; medians in ms"
echo

# Milliseconds one run of "$@" takes, output discarded.
run_ms() {
  local start end
  start="$EPOCHREALTIME"
  "$@" >/dev/null 2>&1 || true
  end="$EPOCHREALTIME"
  echo "$(((${end/./} - ${start/./}) / 1000))"
}

median() {
  sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# compare NAME -- HARNESS_COMMAND... -- OTHER_COMMAND...
compare() {
  local name="$1"
  shift 2
  local ours=() theirs=()
  while [ "$1" != "--" ]; do ours+=("$1"); shift; done
  shift
  theirs=("$@")
  run_ms "${ours[@]}" >/dev/null
  run_ms "${theirs[@]}" >/dev/null
  local a=() b=()
  for _ in $(seq "$rounds"); do
    a+=("$(run_ms "${ours[@]}")")
    b+=("$(run_ms "${theirs[@]}")")
  done
  local ma mb
  ma="$(printf '%s\n' "${a[@]}" | median)"
  mb="$(printf '%s\n' "${b[@]}" | median)"
  awk -v n="$name" -v a="$ma" -v b="$mb" \
    'BEGIN { printf "%-34s harness %8.1f   other %8.1f   ratio %.2fx\n", n, a, b, a / b }'
}

rg_flags=(--hidden --no-require-git -n)
fd_flags=(--hidden --no-require-git)
h=("$harness" call)

compare "grep rare literal" -- "${h[@]}" grep '{"pattern":"GetSystemTimePreciseAsFileTime","literal":true}' --cwd "$corpus" \
  -- "$rg" "${rg_flags[@]}" -F GetSystemTimePreciseAsFileTime "$corpus"
compare "grep regex, few matches" -- "${h[@]}" grep '{"pattern":"impl\\s+Drop\\s+for\\s+\\w+Guard"}' --cwd "$corpus" \
  -- "$rg" "${rg_flags[@]}" 'impl\s+Drop\s+for\s+\w+Guard' "$corpus"
compare "grep case-insensitive literal" -- "${h[@]}" grep '{"pattern":"getsystemtimeprecise","literal":true,"ignoreCase":true}' --cwd "$corpus" \
  -- "$rg" "${rg_flags[@]}" -i -F getsystemtimeprecise "$corpus"
compare "grep 'fn ' limit 100 vs rg all" -- "${h[@]}" grep '{"pattern":"fn ","literal":true}' --cwd "$corpus" \
  -- "$rg" "${rg_flags[@]}" -F 'fn ' "$corpus"
compare "find *.rs, all results" -- "${h[@]}" find '{"pattern":"*.rs","limit":10000000}' --cwd "$corpus" \
  -- "$fd" "${fd_flags[@]}" --glob '*.rs' "$corpus"
compare "find src/**/*.rs, all results" -- "${h[@]}" find '{"pattern":"src/**/*.rs","limit":10000000}' --cwd "$corpus" \
  -- "$fd" "${fd_flags[@]}" --glob --full-path '**/src/**/*.rs' "$corpus"
