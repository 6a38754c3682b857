#!/usr/bin/env bash
# bench-start.sh — what does a start of reaper cost, beside a Go hello
# world and beside ps?
#
# Builds a Go hello world and reaper (CGO_ENABLED=0), then times, side by
# side in one run (scripts/startbench: every command once a round, in a
# new random order; medians, and the medians of each round's ratio to the
# hello world's):
#   a Go hello world
#   reaper version
#   ps -e -o pid,ppid,pgid,sid,tty,stat,lstart,rss,uid,args
#   reaper scan                     (the embedded policy, table output)
# each in a HOME and XDG dirs of its own, empty (a scan as root still reads
# every home's clients' state, as it does on the machine). It then prints
# the package initialisation of each binary: the sum of
# GODEBUG=inittrace=1's clock and bytes before main, the median of 15.
#
# usage: scripts/bench-start.sh [-n ROUNDS] [-b REAPER_BINARY]
#   defaults: 30 rounds, the binary built from this checkout.
set -euo pipefail
trap 'echo "bench-start: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

ROUNDS=30
BIN=""
while getopts "n:b:h" opt; do
	case $opt in
	n) ROUNDS=$OPTARG ;;
	b) BIN=$OPTARG ;;
	*) sed -n '2,19p' "$0"; exit 2 ;;
	esac
done
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/hello" "$work/home"
cat >"$work/hello/main.go" <<'GO'
package main

import "fmt"

func main() { fmt.Println("hello, world") }
GO
(cd "$work/hello" && printf 'module hello\n\ngo 1.22\n' >go.mod && CGO_ENABLED=0 go build -o "$work/hello-bin" .)
if [ -z "$BIN" ]; then
	CGO_ENABLED=0 go build -o "$work/reaper" ./cmd/reaper
	BIN=$work/reaper
fi
CGO_ENABLED=0 go build -o "$work/startbench" ./scripts/startbench

export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_CACHE_HOME=$work/home/.cache \
	XDG_STATE_HOME=$work/home/.local/state XDG_DATA_HOME=$work/home/.local/share XDG_RUNTIME_DIR=$work/home/run
echo "$(date -u +%F), $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $(ls /proc | grep -c '^[0-9]') processes, uid $(id -u)"
"$work/startbench" -n "$ROUNDS" -- "$work/hello-bin" "$BIN version" \
	"$(command -v ps) -e -o pid,ppid,pgid,sid,tty,stat,lstart,rss,uid,args" "$BIN scan"

# inittrace: the sum of a run's lines, the median of 15 runs.
inits() {
	for _ in $(seq 15); do
		GODEBUG=inittrace=1 "$@" 2>&1 >/dev/null | awk '$1 == "init" {ms += $5; b += $8} END {printf "%.2f %d\n", ms, b}'
	done | sort -n | sed -n 8p
}
read -r hms hb <<<"$(inits "$work/hello-bin")"
read -r rms rb <<<"$(inits "$BIN" version)"
echo "package initialisation (GODEBUG=inittrace=1, median of 15): hello world $hms ms, $hb bytes; reaper $rms ms, $rb bytes"
