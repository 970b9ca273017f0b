# Installing pinned Python and npm packages into a directory under target/,
# once per set of pins: sourced by tests/mcp/run.sh (the MCP clients) and
# tests/mcp/servers/run.sh (the MCP servers).
#
# An install is current when its `.pins` stamp holds the digest of the pin
# files it was made from, so a second run with the same pins downloads
# nothing.

digest() { cat "$@" | sha256sum | cut -d' ' -f1; }
current() { [ -f "$1/.pins" ] && [ "$(cat "$1/.pins")" = "$2" ]; }

# install_python VENV PIN_DIR WHAT: a virtualenv at VENV holding PIN_DIR's
# requirements.txt.
install_python() {
  local venv="$1" pins
  pins="$(digest "$2/requirements.txt")"
  current "$venv" "$pins" && return 0
  echo "installing $3 into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps -r "$2/requirements.txt"
  echo "$pins" > "$venv/.pins"
}

# install_node DIR PIN_DIR WHAT: PIN_DIR's package.json and package-lock.json
# installed under DIR/node_modules (Node 22 itself comes as a package). The
# machine's npm may run an older Node than the packages ask for: they are
# only unpacked here, and run on the Node 22 installed with them.
install_node() {
  local dir="$1" pins
  pins="$(digest "$2/package.json" "$2/package-lock.json")"
  current "$dir" "$pins" && return 0
  echo "installing $3 into $dir"
  if ! command -v npm >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends npm >/dev/null
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$2/package.json" "$2/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$pins" > "$dir/.pins"
}
