#!/usr/bin/env bash
# The client the conformance suite runs for each of its client scenarios:
#
#   conformance client --command "client-command.sh HARNESS_BIN" --scenario X
#
# The suite appends the URL of its test server as the last argument and
# names the scenario in MCP_CONFORMANCE_SCENARIO (with MCP_CONFORMANCE_CONTEXT,
# a JSON object, for the scenarios that hand the client credentials). This
# script writes a harness scenario that reaches that URL and does what the
# suite's scenario asks, in a temporary directory, and runs `harness run` on
# it: its exit code is harness's (0 when every check of the scenario held).
set -euo pipefail
harness="$1"
url="${*: -1}"
scenario="${MCP_CONFORMANCE_SCENARIO:-}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
file="$dir/conformance.yaml"

# YAML double-quoted scalars of the values the suite hands over (JSON strings
# are valid YAML double-quoted scalars).
quote() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }
context() {
  python3 -c 'import json,os,sys; v=json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT","{}")).get(sys.argv[1]); print("" if v is None else v)' "$1"
}

server="  suite:
    url: $(quote "$url")"
top=""
steps="  - say: connected"
case "$scenario" in
  tools_call)
    steps="  - call: add_numbers
    args: { a: 2, b: 3 }
    expect: { ok: true, equals: The sum of 2 and 3 is 5 }"
    ;;
  elicitation-sep1034-client-defaults)
    top="elicitation:
  - { action: accept, content: {} }"
    steps="  - call: test_client_elicitation_defaults
    expect: { ok: true, contains: Elicitation completed }"
    ;;
  sse-retry)
    steps="  - call: test_reconnection
    expect: { ok: true, contains: Reconnection test completed successfully }"
    ;;
  auth/client-credentials-basic)
    export CONFORMANCE_CLIENT_SECRET="$(context client_secret)"
    server="$server
    auth:
      client_id: $(quote "$(context client_id)")
      client_secret: \${env:CONFORMANCE_CLIENT_SECRET}"
    ;;
  auth/client-credentials-jwt)
    export CONFORMANCE_PRIVATE_KEY="$(context private_key_pem)"
    server="$server
    auth:
      client_id: $(quote "$(context client_id)")
      private_key: \${env:CONFORMANCE_PRIVATE_KEY}
      signing_algorithm: $(quote "$(context signing_algorithm)")"
    ;;
esac

cat > "$file" <<YAML
name: conformance
servers:
$server
tools: [suite]
$top
model:
$steps
YAML
exec "$harness" run "$file"
