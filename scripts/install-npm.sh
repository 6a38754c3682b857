#!/usr/bin/env bash
# install-npm.sh NAME — the published packages testdata/NAME/package-lock.json
# pins (the real OpenClaw gateway and node 24; the agent clients), installed
# into a cache that later runs reuse, keyed by the lockfile.
#
# Prints the directory that holds node_modules. When npm cannot install
# them (no registry), it says so on stderr, prints nothing and exits 0:
# the tests that need them then skip with that reason.
#
# usage: scripts/install-npm.sh openclaw|clients   (REAPER_CACHE overrides the cache dir)
set -euo pipefail
name=${1:?usage: install-npm.sh NAME}
here=$(cd "$(dirname "$0")/.." && pwd)
src=$here/testdata/$name
key=$(sha256sum "$src/package-lock.json" | cut -c1-16)
cache=${REAPER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reaper}/$name-$key
if [ ! -e "$cache/.installed" ]; then
	rm -rf "$cache"
	mkdir -p "$cache"
	cp "$src/package.json" "$src/package-lock.json" "$cache/"
	# --ignore-scripts: openclaw's preinstall checks the node that runs npm
	# (Debian's 20) and refuses, and no package here needs its install
	# scripts: the tests run each program's own entry point or binary.
	if ! (cd "$cache" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >&2; then
		echo "install-npm: npm ci of $name failed: the tests that need it will skip" >&2
		rm -rf "$cache"
		exit 0
	fi
	touch "$cache/.installed"
fi
echo "$cache"
