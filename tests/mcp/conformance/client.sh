#!/usr/bin/env bash
# The official MCP conformance suite's client scenarios against `harness run`.
#
# Usage: tests/mcp/conformance/client.sh PATH/TO/harness
#
# Each client scenario of the suite (`conformance list --client`) is run on
# its own: the suite starts its test server and runs client-command.sh
# (beside this file), which writes a harness scenario for it and runs
# `harness run` on it. Prints a table scenario -> pass/fail, and exits 1 when
# a scenario's result is not the one client-expected-failures.yml gives
# (a failure not listed there, or a listed one that now passes).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
harness="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
# shellcheck source=install.sh
. "$here/install.sh" >/dev/null
expected="$here/client-expected-failures.yml"
# The names under `client:` (one `- NAME` a line, comments after `#`).
expected_names="$(sed -n '/^client:/,/^[^ #]/p' "$expected" | sed -n 's/^ *- *\([^ #]*\).*/\1/p')"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

scenarios="$(conformance list --client | sed -n 's/^ *- \([^ ]*\).*/\1/p')"
unexpected=0
printf '%-45s %-6s %s\n' scenario result expected
for scenario in $scenarios; do
  if conformance client --command "$here/client-command.sh $harness" \
    --scenario "$scenario" --timeout 30000 >"$out/log" 2>&1; then
    result=pass
  else
    result=fail
  fi
  if grep -qxF "$scenario" <<<"$expected_names"; then want=fail; else want=pass; fi
  mark=""
  if [ "$result" != "$want" ]; then
    mark="  <- unexpected"
    unexpected=1
    if [ -n "${CONFORMANCE_VERBOSE:-}" ]; then cat "$out/log" >&2; fi
  fi
  printf '%-45s %-6s %s%s\n' "$scenario" "$result" "$want" "$mark"
done
exit "$unexpected"
