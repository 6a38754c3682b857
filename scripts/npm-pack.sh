#!/usr/bin/env bash
# npm-pack.sh — the npm packages of a build, from goreleaser's archives:
# @orphanreaper/reaper (the launcher, packaging/npm/launcher.js, as `reaper`)
# and one package per platform holding its prebuilt binary
# (@orphanreaper/reaper-linux-x64, -linux-arm64, -darwin-x64,
# -darwin-arm64, -win32-x64, -win32-arm64: bin/reaper, bin/reaper.exe on
# Windows), each with npm's "os" and "cpu" so that npm installs the
# one that fits as an optional dependency — no postinstall, no download at
# install time (the way esbuild and Codex ship). Writes the tarballs npm
# pack makes into OUT and prints their paths.
#
# usage: scripts/npm-pack.sh VERSION RELEASE_DIR OUT
set -euo pipefail
version=$1 rel=$2 out=$3
# npm wants semver: scripts/version.sh's 0.0.0~gitTIME.N.HASH sorts before
# 0.0.0 as a prerelease, 0.0.0-gitTIME.N.HASH.
npmver=${version//\~/-}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
out=$(cd "$out" && pwd)

opt=""
for target in linux_amd64:linux:x64 linux_arm64:linux:arm64 darwin_amd64:darwin:x64 darwin_arm64:darwin:arm64 windows_amd64:win32:x64 windows_arm64:win32:arm64; do
	IFS=: read -r archive os cpu <<<"$target"
	name="@orphanreaper/reaper-$os-$cpu"
	dir="$work/$os-$cpu"
	mkdir -p "$dir/bin"
	exe=reaper
	if [ "$os" = win32 ]; then
		exe=reaper.exe
		unzip -q -j "$rel"/reaper_*_"$archive".zip reaper.exe -d "$dir/bin"
	else
		tar -xzf "$rel"/reaper_*_"$archive".tar.gz -C "$dir/bin" reaper
	fi
	cat >"$dir/package.json" <<JSON
{
  "name": "$name",
  "version": "$npmver",
  "description": "reaper's prebuilt binary for $os $cpu (installed by @orphanreaper/reaper)",
  "license": "Apache-2.0",
  "repository": {"type": "git", "url": "https://github.com/orphanreaper/reaper"},
  "os": ["$os"],
  "cpu": ["$cpu"],
  "files": ["bin/$exe"],
  "preferUnplugged": true
}
JSON
	(cd "$dir" && npm pack --silent --pack-destination "$out" >/dev/null)
	opt="$opt${opt:+,}
    \"$name\": \"$npmver\""
done

main="$work/main"
mkdir -p "$main/bin"
cp "$here/packaging/npm/launcher.js" "$main/bin/reaper.js"
cp "$here/README.md" "$here/LICENSE" "$main/"
cat >"$main/package.json" <<JSON
{
  "name": "@orphanreaper/reaper",
  "version": "$npmver",
  "description": "Find and remove the process trees AI-agent clients leave behind",
  "license": "Apache-2.0",
  "repository": {"type": "git", "url": "https://github.com/orphanreaper/reaper"},
  "bin": {"reaper": "bin/reaper.js"},
  "files": ["bin/reaper.js", "README.md", "LICENSE"],
  "engines": {"node": ">=18"},
  "optionalDependencies": {$opt
  }
}
JSON
(cd "$main" && npm pack --silent --pack-destination "$out" >/dev/null)
ls "$out"/*.tgz
