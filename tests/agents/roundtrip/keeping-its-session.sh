#!/usr/bin/env bash
# `keeping-its-session.sh PROGRAM ARGS…`: an agent as its built-in profile
# starts it, but keeping its session: the profile's arguments without
# `--ephemeral` (Codex) or `--no-session` (pi), so that it writes the
# transcript the round trip imports.
program="$1"
shift
args=()
for arg in "$@"; do
  case "$arg" in
    --ephemeral | --no-session) ;;
    *) args+=("$arg") ;;
  esac
done
exec "$program" "${args[@]}"
