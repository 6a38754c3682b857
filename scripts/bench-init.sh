#!/usr/bin/env bash
# bench-init.sh — what does `reaper run` cost as a container's idle init,
# beside tini?
#
# Starts, side by side, each as PID 1 of its own PID namespace
# (unshare --pid --fork --mount-proc, what a container runtime does),
#   tini -- sleep …
#   reaper run -- sleep …     (the watch inside on, as an init's default)
# lets them idle for SECONDS, and prints each init's CPU (user+system, from
# /proc/PID/stat, scaled to an hour) and its RSS now and at its peak
# (VmRSS, VmHWM), the watch reaper run starts beside its command counted
# on a line of its own. Root only (PID namespaces); everything started is
# in one process group of this script's, SIGKILLed on every exit.
#
# usage: scripts/bench-init.sh [-s SECONDS] [-b REAPER_BINARY]
#   defaults: 120 s, the binary built from this checkout.
set -euo pipefail
trap 'echo "bench-init: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

SECS=120
BIN=""
while getopts "s:b:h" opt; do
	case $opt in
	s) SECS=$OPTARG ;;
	b) BIN=$OPTARG ;;
	*) sed -n '2,16p' "$0"; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "bench-init: needs root (PID namespaces)" >&2; exit 2; }
command -v tini >/dev/null || { echo "bench-init: needs tini (apt-get install tini)" >&2; exit 2; }

. "$(dirname "$0")/bench-lib.sh"

# start NAME ARGV…: the init of a new PID namespace, in a group of ours.
start() {
	local name=$1
	shift
	setsid unshare --pid --fork --mount-proc "$@" </dev/null >"$work/$name.out" 2>&1 &
	groups+=($!)
}
start tini tini -- sleep 100000
start reaper "$BIN" run -- sleep 100000

# init PID: the namespace's PID 1, the one child of unshare.
init() {
	local u=$1 c
	for _ in $(seq 1 200); do
		c=$(pgrep -P "$u" | head -1 || true)
		[ -n "$c" ] && { echo "$c"; return; }
		sleep 0.05
	done
	echo "bench-init: no init under $u" >&2
	exit 1
}
tini_pid=$(init "${groups[0]}")
reaper_pid=$(init "${groups[1]}")
sleep 2 # past start-up: the figures are the idle state's
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
helper=$(pgrep -P "$reaper_pid" -f ' watch --under ' || true)
t0=$(ticks "$tini_pid") r0=$(ticks "$reaper_pid") h0=$([ -n "$helper" ] && ticks "$helper" || echo 0)
sleep "$SECS"
t1=$(ticks "$tini_pid") r1=$(ticks "$reaper_pid") h1=$([ -n "$helper" ] && ticks "$helper" || echo 0)
kb() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }
perhour() { awk -v d="$1" -v s="$SECS" -v hz="$hz" 'BEGIN {printf "%.2f", d / hz * 3600 / s}'; }

echo "idle for $SECS s, $(date -u +%Y-%m-%d), $(nproc) cores"
printf '%-34s %14s %10s %10s %10s\n' "" "CPU s/hour" "RSS KiB" "anon KiB" "peak KiB"
row() { printf '%-34s %14s %10s %10s %10s\n' "$1" "$(perhour "$2")" "$(kb "$3" VmRSS)" "$(kb "$3" RssAnon)" "$(kb "$3" VmHWM)"; }
row "tini 0.19 (PID 1)" $((t1 - t0)) "$tini_pid"
row "reaper run (PID 1)" $((r1 - r0)) "$reaper_pid"
if [ -n "$helper" ]; then
	row "  its watch inside (reaper watch)" $((h1 - h0)) "$helper"
fi
echo "reaper processes: $([ -n "$helper" ] && echo "2 (the init, and its watch's)" || echo "1 (the watch in the init's process)")"
