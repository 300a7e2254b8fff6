#!/usr/bin/env bash
# Builds a release of an okb project from its pins and publishes it reproducibly:
#
#   1. okb make --locked   every source pinned, nothing downloaded (sources/ or a mirror)
#   2. okb check           the answers in [check] match the committed snapshots
#   3. okb verify          the files on disk match build/manifest.json, and a build from
#                          the pins reproduces it
#   4. dist/<name>.tar.gz  the manifest and every output it lists, packed reproducibly
#                          (sorted, no times, no owners), with its SHA-256 beside it
#
# usage: release.sh [PROJECT_DIR] [DIST_DIR]   (OKB: the okb binary; default `okb`)
# Exit status: non-zero at the first step that fails, which says why.
set -euo pipefail
project="$(cd "${1:-.}" && pwd)"
dist="${2:-$project/dist}"
okb="${OKB:-okb}"
cd "$project"

"$okb" make --locked
"$okb" check --no-build
"$okb" verify

# The outputs the manifest lists (the store included), one path per line.
mapfile -t outputs < <("$okb" verify --no-build --json | sed -n 's/^ *"path": "\(.*\)",\{0,1\}$/\1/p')
manifest="$(dirname "${outputs[0]}")/manifest.json"
name="$(basename "$project")-release"
mkdir -p "$dist"
tar --sort=name --mtime='@0' --owner=0 --group=0 --numeric-owner -cf - "$manifest" "${outputs[@]}" \
    | gzip -n > "$dist/$name.tar.gz"
(cd "$dist" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
echo "released $dist/$name.tar.gz ($(wc -c < "$dist/$name.tar.gz") bytes, ${#outputs[@]} files and the manifest)"
