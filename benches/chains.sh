#!/usr/bin/env bash
# Writes COUNT copies of scenarios/chains/grep_read_edit.yaml (each named
# after its number) into DIR, with a harness.yaml that points at this
# checkout's fixtures and picks TOKENIZER: the suite `harness run DIR`
# measures the runner on (benches/README.md, "Runner").
#
#   benches/chains.sh DIR [COUNT] [TOKENIZER]     # default 1000, o200k
set -euo pipefail
dir=${1:?usage: benches/chains.sh DIR [COUNT] [TOKENIZER]}
count=${2:-1000}
tokenizer=${3:-o200k}
root=$(cd "$(dirname "$0")/.." && pwd)
source="$root/scenarios/chains/grep_read_edit.yaml"
rm -rf "$dir"
mkdir -p "$dir"
printf 'fixtures: %s/fixtures\ntokenizer: %s\n' "$root" "$tokenizer" >"$dir/harness.yaml"
body=$(sed 1d "$source")
for i in $(seq -w 1 "$count"); do
  printf 'name: chain %s\n%s\n' "$i" "$body" >"$dir/chain_$i.yaml"
done
