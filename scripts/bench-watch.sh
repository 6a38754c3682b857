#!/usr/bin/env bash
# bench-watch.sh — how fast does `reaper watch` react, and what does it cost
# idle, beside `reaper reap` polled every 2 s? Run as root.
#
# Reaction: an owner titled like a gateway, with a child that carries its
# pid (as a service-mode gateway's children do), is started, watched for
# three seconds, then SIGKILLed; the time until its orphan is confirmed
# gone (it honours SIGTERM) is taken, REPS times, under the watch and —
# the baseline — under `reaper reap` run every 2 s.
# Idle: with N extra processes, the watch's CPU over SECS seconds with
# nothing to do (the default backstop, 1m), and the CPU of the polled
# reaps over the same SECS, each per hour.
# Storm: the same, while one shell starts and ends unrelated processes
# (/bin/true) as fast as it can for STORM seconds: the watch's CPU over
# the storm, beside the polled reaps' over a storm as long.
# Passes (-p PASSES): BenchmarkWatchPasses (run/), PASSES passes of an
# in-process watch (the embedded policy, dry-run: it signals nothing) with
# churn beside it: its RSS after 100 passes and at the end.
# Every rule is confined to this run's own processes (a tag in their
# argv); teardown SIGKILLs the process groups the script made.
#
# usage: scripts/bench-watch.sh [-n N] [-r REPS] [-s SECS] [-t STORM] [-p PASSES] [-b REAPER_BINARY]
set -euo pipefail

N=1000
REPS=10
SECS=60
STORM=20
PASSES=0
BIN=""
while getopts "n:r:s:t:p:b:h" opt; do
	case $opt in
	n) N=$OPTARG ;;
	r) REPS=$OPTARG ;;
	s) SECS=$OPTARG ;;
	t) STORM=$OPTARG ;;
	p) PASSES=$OPTARG ;;
	b) BIN=$OPTARG ;;
	*) sed -n '2,22p' "$0"; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "bench-watch: run as root" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
groups=()
teardown() {
	for g in "${groups[@]+"${groups[@]}"}"; do kill -KILL -- "-$g" 2>/dev/null || true; done
	rm -rf "$work"
}
trap teardown EXIT
if [ -z "$BIN" ]; then
	BIN=$work/reaper
	(cd "$here" && CGO_ENABLED=0 go build -o "$BIN" ./cmd/reaper)
fi
tag="benchwatch$((100000 + RANDOM))"
cat >"$work/policy.toml" <<TOML
version = 1
[defaults]
min_age = "0s"
grace = "5s"
[[owner]]
name = "openclaw-gateway"
cmdline = '(^|/)openclaw-gateway( |$)'
pid_env = "OPENCLAW_GATEWAY_SERVICE_PID"
[[rule]]
name = "bench-owner-dead"
when = ["owner-dead"]
cmdline = '$tag'
action = "terminate"
TOML

# start_owner starts an owner and its child in a session of their own and
# prints "OWNER CHILD".
start_owner() {
	setsid bash -c "exec -a openclaw-gateway bash -c 'export OPENCLAW_GATEWAY_SERVICE_PID=\$\$; (exec -a $tag-child sleep 600) & echo \$\$ \$! > $work/pids; wait'" </dev/null >/dev/null 2>&1 &
	for _ in $(seq 1 200); do
		[ -s "$work/pids" ] && break
		sleep 0.01
	done
	cat "$work/pids"
	rm -f "$work/pids"
}

# react SIGKILLs an owner after 3 s and prints how long its orphan lived
# on, in ms.
react() {
	read -r owner child < <(start_owner)
	groups+=("$owner")
	sleep 3
	local t0
	t0=$EPOCHREALTIME
	kill -KILL "$owner"
	for _ in $(seq 1 3000); do
		state=$(awk '{print $3}' "/proc/$child/stat" 2>/dev/null || true)
		[ -z "$state" ] || [ "$state" = Z ] && break
		sleep 0.005
	done
	echo "$(( (${EPOCHREALTIME/./} - ${t0/./}) / 1000 ))"
}

# stats prints p50 p95 max of numbers on stdin.
stats() { sort -n | awk '{a[NR]=$1} END {p50=a[int((NR+1)/2)]; i=int(NR*0.95+0.999); if(i<1)i=1; if(i>NR)i=NR; printf "p50 %d ms, p95 %d ms, max %d ms", p50, a[i], a[NR]}'; }

lock=$work/reaper.lock
echo "reaction: owner SIGKILL → its orphan gone (SIGTERM honoured), $REPS reps each"
"$BIN" watch --policy "$work/policy.toml" --lock-file "$lock" --journal off --backstop 2s >"$work/watch.out" 2>&1 &
watch=$!
sleep 1
for ((i = 0; i < REPS; i++)); do react; done >"$work/watch.ms"
kill -TERM "$watch"
wait "$watch" || true
echo "  reaper watch (backstop 2s):        $(stats <"$work/watch.ms")"

( while :; do "$BIN" reap --quiet --policy "$work/policy.toml" --lock-file "$lock" --journal off >/dev/null 2>&1 || true; sleep 2; done ) &
poll=$!
for ((i = 0; i < REPS; i++)); do react; done >"$work/poll.ms"
kill "$poll" 2>/dev/null || true
wait "$poll" 2>/dev/null || true
echo "  reaper reap every 2 s (baseline):  $(stats <"$work/poll.ms")"

echo "idle: $N extra processes, ${SECS}s each"
setsid sh -c "echo \$\$ > $work/pop; i=0; while [ \$i -lt $N ]; do sleep 3600 & i=\$((i+1)); done; wait" </dev/null >/dev/null 2>&1 &
disown # teardown ends it: no "Killed" line
for _ in $(seq 1 200); do [ -s "$work/pop" ] && break; sleep 0.01; done
groups+=("$(cat "$work/pop")")
sleep 3
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
"$BIN" watch --policy "$work/policy.toml" --lock-file "$lock" --journal off >"$work/watch.out" 2>&1 &
watch=$!
sleep 3 # its first pass
c0=$(ticks "$watch")
sleep "$SECS"
c1=$(ticks "$watch")
rss=$(awk '/VmRSS/ {print $2}' "/proc/$watch/status")
kill -TERM "$watch"
wait "$watch" || true
# Ticks of 1/hz s: a figure under one tick over SECS is said as a bound.
wcpu=$(awk -v t=$((c1 - c0)) -v hz="$hz" -v s="$SECS" 'BEGIN {if (t == 0) printf "< %.2f (no tick in %d s)", 3600 / hz / s, s; else printf "%.2f", t / hz * 3600 / s}')
pcpu=0
end=$((SECONDS + SECS))
while ((SECONDS < end)); do
	/usr/bin/time -o "$work/time" -f "%U %S" "$BIN" reap --quiet --policy "$work/policy.toml" --lock-file "$lock" --journal off >/dev/null 2>&1 || true
	c=$(tail -1 "$work/time")
	pcpu=$(awk -v a="$pcpu" -v c="$c" 'BEGIN {split(c, x, " "); print a + x[1] + x[2]}')
	sleep 2
done
pcpu=$(awk -v a="$pcpu" -v s="$SECS" 'BEGIN {printf "%.1f", a * 3600 / s}')
echo "  reaper watch, idle:                $wcpu s CPU per hour, RSS $((rss / 1024)) MiB"
grep -v '^$' "$work/watch.out" | head -5 || true
echo "  reaper reap every 2 s (baseline):  $pcpu s CPU per hour"

# storm runs unrelated exits for STORM seconds, in a group of its own, and
# leaves how many processes it ran in storm.n.
storm() {
	setsid bash -c "echo \$\$ > $work/storm; end=\$((SECONDS + $STORM)); n=0; while ((SECONDS < end)); do /bin/true; n=\$((n + 1)); done; echo \$n > $work/storm.n" </dev/null >/dev/null 2>&1 &
	local s=$!
	for _ in $(seq 1 200); do [ -s "$work/storm" ] && break; sleep 0.01; done
	groups+=("$(cat "$work/storm")")
	rm -f "$work/storm"
	wait "$s" || true
}
echo "storm: one shell running /bin/true without pause, ${STORM}s each"
"$BIN" watch --policy "$work/policy.toml" --lock-file "$lock" --journal off >"$work/watch.out" 2>&1 &
watch=$!
sleep 3
c0=$(ticks "$watch")
storm
c1=$(ticks "$watch")
ran=$(cat "$work/storm.n")
kill -TERM "$watch"
wait "$watch" || true
wstorm=$(awk -v t=$((c1 - c0)) -v hz="$hz" 'BEGIN {printf "%.2f", t / hz}')
( while :; do /usr/bin/time -a -o "$work/ptime" -f "%U %S" "$BIN" reap --quiet --policy "$work/policy.toml" --lock-file "$lock" --journal off >/dev/null 2>&1 || true; sleep 2; done ) &
poll=$!
storm
kill "$poll" 2>/dev/null || true
wait "$poll" 2>/dev/null || true
pran=$(cat "$work/storm.n")
pstorm=$(awk '/^[0-9.]+ [0-9.]+$/ {s += $1 + $2} END {printf "%.2f", s}' "$work/ptime")
echo "  reaper watch:                      $wstorm s CPU over the storm ($ran processes, $((ran / STORM))/s)"
echo "  reaper reap every 2 s (baseline):  $pstorm s CPU over the storm ($pran processes, $((pran / STORM))/s)"
if [ "$PASSES" -gt 0 ]; then
	echo "passes: $PASSES, with churn beside them (BenchmarkWatchPasses)"
	(cd "$here" && go test ./run -run '^$' -bench '^BenchmarkWatchPasses$' -benchtime "${PASSES}x" -timeout 2h) | grep '^BenchmarkWatchPasses' | sed 's/^/  /'
fi
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%d GiB", $2/1048576}' /proc/meminfo), kernel $(uname -r), $(date -u +%F)"
