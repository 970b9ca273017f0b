#!/usr/bin/env bash
# Packs the npm packages of `harness` from a built binary:
#
#   packaging/npm/build.sh BINARY OUT_DIR [PLATFORM]
#
# writes OUT_DIR/coding-harness-VERSION.tgz (the `harness` command, a
# small Node launcher) and OUT_DIR/coding-harness-PLATFORM-VERSION.tgz
# (the binary; PLATFORM defaults to linux-x64, the os and cpu npm installs
# it on). VERSION is Cargo.toml's. Publishing is `npm publish` of each
# tarball, the platform packages first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
binary="$1"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
platform="${3:-linux-x64}"
os="${platform%-*}"
cpu="${platform#*-}"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$here/../../Cargo.toml" | head -n 1)"
[ -n "$version" ] || { echo "no version in Cargo.toml" >&2; exit 1; }
"$binary" --version | grep -qx "harness $version" || {
  echo "$binary is not harness $version ($("$binary" --version))" >&2; exit 1; }

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
fill() { sed -e "s/@VERSION@/$version/g" -e "s/@PLATFORM@/$platform/g" \
  -e "s/@OS@/$os/g" -e "s/@CPU@/$cpu/g" "$1" > "$2"; }

mkdir -p "$stage/platform/bin" "$stage/main/bin"
fill "$here/platform/package.json.in" "$stage/platform/package.json"
install -m 755 "$binary" "$stage/platform/bin/harness"
printf 'The `harness` binary for %s, installed by the `coding-harness` package.\n' \
  "$platform" > "$stage/platform/README.md"
fill "$here/coding-harness/package.json.in" "$stage/main/package.json"
install -m 755 "$here/coding-harness/bin/harness.js" "$stage/main/bin/harness.js"
cp "$here/../../README.md" "$stage/main/README.md"

(cd "$stage/platform" && npm pack --silent --pack-destination "$out" >/dev/null)
(cd "$stage/main" && npm pack --silent --pack-destination "$out" >/dev/null)
ls "$out/coding-harness-$version.tgz" "$out/coding-harness-$platform-$version.tgz"
