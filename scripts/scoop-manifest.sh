#!/usr/bin/env bash
# scoop-manifest.sh — the Scoop manifest of a build, from its zips'
# checksums (SHA256SUMS in RELEASE_DIR): reaper.exe for 64-bit and arm64
# Windows, on the user's PATH as Scoop's shim, and a note that the
# embedded policy only reports until `reaper init` writes one (init's
# logon task names the app's current junction, which `scoop update`
# repoints). Printed on stdout; a bucket takes it as bucket/reaper.json.
#
# usage: scripts/scoop-manifest.sh VERSION RELEASE_DIR
set -euo pipefail
version=$1 rel=$2
base="https://github.com/orphanreaper/reaper/releases/download/v$version"
sum() { awk -v f="reaper_${version}_$1.zip" '$2 == f { print $1 }' "$rel/SHA256SUMS"; }
for t in windows_amd64 windows_arm64; do
	[ -n "$(sum "$t")" ] || { echo "scoop-manifest: no checksum for reaper_${version}_$t.zip in $rel/SHA256SUMS" >&2; exit 1; }
done
cat <<JSON
{
    "version": "$version",
    "description": "Find and remove the process trees AI-agent clients leave behind",
    "homepage": "https://github.com/orphanreaper/reaper",
    "license": "Apache-2.0",
    "architecture": {
        "64bit": {
            "url": "$base/reaper_${version}_windows_amd64.zip",
            "hash": "$(sum windows_amd64)"
        },
        "arm64": {
            "url": "$base/reaper_${version}_windows_arm64.zip",
            "hash": "$(sum windows_arm64)"
        }
    },
    "bin": "reaper.exe",
    "notes": "reaper only reports until it has a policy: 'reaper init' shows what the example policy would do here, writes it and registers the logon task that runs 'reaper watch' (docs/windows.md)."
}
JSON
