#!/usr/bin/env bash
# fuzz.sh — run every fuzz target of the module, found by `go test -list`
# (none is listed by hand: a new parser's FuzzX is run the day it lands).
#
# A count, not a duration: with -fuzztime 10s the engine can stop a worker
# mid-call at the deadline and fail with "context deadline exceeded"
# without any failing input (golang/go#51484, #56238) — that flaked CI
# once. A count has no wall-clock deadline; 60000 runs are 3-8 s per target.
#
# usage: scripts/fuzz.sh [RUNS]     (default 60000)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-60000}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
targets=()
names=()
# `go test -list` prints a package's matching names, then its "ok PKG" line.
while read -r word pkg _; do
	case $word in
	Fuzz*) names+=("$word") ;;
	ok)
		for n in "${names[@]+"${names[@]}"}"; do targets+=("$pkg:$n"); done
		names=()
		;;
	esac
done < <(go test -list '^Fuzz' $(go list ./... | grep -v '/cmd/') 2>/dev/null)
if ((${#targets[@]} == 0)); then
	echo "FAIL: no fuzz target found"
	exit 1
fi
echo "${#targets[@]} fuzz targets, $runs runs each"
for t in "${targets[@]}"; do
	pkg=${t%%:*} name=${t#*:}
	if ! go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "${runs}x" >"$log" 2>&1; then
		echo "FAIL $pkg $name"
		tail -n 30 "$log"
		git status --short -- '*/testdata/fuzz/*' # a failing input, if one was written
		exit 1
	fi
	echo "ok $pkg $name"
done
