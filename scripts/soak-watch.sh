#!/usr/bin/env bash
# soak-watch.sh — does `reaper watch` end every tree a crashed agent session
# leaves, for as long as sessions keep crashing, at a flat cost? Run as root.
#
# A stand-in Claude Code session (a shell titled claude, run with
# CLAUDE_CONFIG_DIR set, as a user who moved their config dir runs it:
# the dir is then discovered from the live session's own environment, as
# ~/.claude is from the home) writes its session
# file (sessions/<pid>.json: pid, sessionId, startedAt, procStart, as Claude
# Code 2.1.3xx does), starts a stdio server that carries its session id,
# and is SIGKILLed a second later, leaving its file and its server behind,
# as a killed claude does. One starts every INTERVAL for SECS seconds. The
# config dir (CLAUDE_CONFIG_DIR, which the servers carry) starts with STALE
# session files of claudes long gone, so the dir holds more than the
# reader's bound (256) from the start and keeps growing, as a real home's
# does. A watch with a policy that terminates owner-dead trees confined to
# this run's servers (a tag in their argv) runs throughout.
#
# Every 30 s it prints the watch's CPU over the window, its RSS and fds, the
# files in the dir, and the servers alive; at the end, after a backstop and
# a grace, the servers that outlived their claude and were not ended (want
# 0). Teardown SIGKILLs the process groups the script made.
#
# usage: scripts/soak-watch.sh [-s SECS] [-i INTERVAL] [-t STALE] [-b REAPER_BINARY]
set -euo pipefail
SECS=180
INTERVAL=0.5
STALE=300
BIN=""
while getopts "s:i:t:b:h" opt; do
	case $opt in
	s) SECS=$OPTARG ;;
	i) INTERVAL=$OPTARG ;;
	t) STALE=$OPTARG ;;
	b) BIN=$OPTARG ;;
	*) sed -n '2,20p' "$0"; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "soak-watch: run as root" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
chmod 755 "$work"
groups=()
watch=""
teardown() {
	[ -n "$watch" ] && kill -KILL "$watch" 2>/dev/null || true
	for g in "${groups[@]+"${groups[@]}"}"; do kill -KILL -- "-$g" 2>/dev/null || true; done
	rm -rf "$work"
}
trap teardown EXIT
trap 'exit 1' INT TERM
if [ -z "$BIN" ]; then
	BIN=$work/reaper
	(cd "$here" && CGO_ENABLED=0 go build -o "$BIN" ./cmd/reaper)
fi
tag="soakwatch$((100000 + RANDOM))"
cfg=$work/claude
mkdir -p "$cfg/sessions"
chmod 700 "$cfg" "$cfg/sessions"
cat >"$work/policy.toml" <<TOML
version = 1
[defaults]
min_age = "0s"
grace = "5s"
[[rule]]
name = "soak-owner-dead"
when = ["owner-dead"]
cmdline = '^$tag-server'
action = "terminate"
TOML

# The stale files: pids above the kernel's pid_max, an hour old.
old=$(($(date +%s) - 3600))
for ((k = 0; k < STALE; k++)); do
	pid=$((4194305 + k))
	printf '{"pid":%d,"sessionId":"0b5e3a9c-0000-4000-8000-%012d","cwd":"/","startedAt":%d000,"procStart":"1","kind":"interactive"}' \
		"$pid" "$k" "$old" >"$cfg/sessions/$pid.json"
	touch -d "@$old" "$cfg/sessions/$pid.json"
done

# session N starts stand-in claude N in a session of its own and prints
# "CLAUDE SERVER".
session() {
	local n=$1 id
	id=$(printf '5e55a0c0-0000-4000-8000-%012d' "$n")
	CLAUDE_CONFIG_DIR=$cfg setsid bash -c "exec -a claude bash -c '
		start=\$(awk \"{print \\\$22}\" /proc/\$\$/stat)
		printf \"{\\\"pid\\\":%d,\\\"sessionId\\\":\\\"$id\\\",\\\"cwd\\\":\\\"/\\\",\\\"startedAt\\\":%d,\\\"procStart\\\":\\\"%s\\\",\\\"kind\\\":\\\"interactive\\\"}\" \$\$ \$((\$(date +%s%N) / 1000000)) \$start > $cfg/sessions/\$\$.json
		(CLAUDECODE=1 CLAUDE_CODE_SESSION_ID=$id CLAUDE_CONFIG_DIR=$cfg exec -a $tag-server sleep 3600) &
		echo \$\$ \$! > $work/pids.$n
		wait'" </dev/null >/dev/null 2>&1 &
	for _ in $(seq 1 500); do
		[ -s "$work/pids.$n" ] && break
		sleep 0.01
	done
	cat "$work/pids.$n"
	rm -f "$work/pids.$n"
}

alive() { local s; s=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || true); [ -n "$s" ] && [ "$s" != Z ]; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
servers=()
left() {
	local c=0
	for s in "${servers[@]+"${servers[@]}"}"; do alive "$s" && c=$((c + 1)); done
	echo "$c"
}

"$BIN" watch --policy "$work/policy.toml" --lock-file "$work/reaper.lock" --journal off --backstop 30s >"$work/watch.out" 2>&1 &
watch=$!
sleep 3
echo "soak: a stand-in claude every ${INTERVAL}s for ${SECS}s, SIGKILLed after 1 s; ${STALE} stale session files to start; $(nproc) cores, $(date -u +%F)"
printf '%6s %9s %9s %6s %5s %8s %7s\n' time sessions "cpu/30s" rss_MiB fds files alive
start=$SECONDS
window=$SECONDS
c0=$(ticks "$watch")
pending=()
n=0
while ((SECONDS - start < SECS)); do
	n=$((n + 1))
	read -r claude server < <(session "$n")
	groups+=("$claude")
	servers+=("$server")
	pending+=("$claude")
	sleep "$INTERVAL"
	# Each claude is killed a second (two intervals) after it started.
	while ((${#pending[@]} > 2)); do
		kill -KILL "${pending[0]}" 2>/dev/null || true
		pending=("${pending[@]:1}")
	done
	if ((SECONDS - window >= 30)); then
		c1=$(ticks "$watch")
		printf '%5ds %9d %8.2fs %7.1f %5d %8d %7d\n' $((SECONDS - start)) "$n" "$(awk -v t=$((c1 - c0)) -v hz="$hz" 'BEGIN {print t / hz}')" \
			"$(awk '/VmRSS/ {print $2 / 1024}' "/proc/$watch/status")" "$(ls "/proc/$watch/fd" | wc -l)" "$(ls "$cfg/sessions" | wc -l)" "$(left)"
		c0=$c1
		window=$SECONDS
	fi
done
for c in "${pending[@]+"${pending[@]}"}"; do kill -KILL "$c" 2>/dev/null || true; done
sleep 40 # a backstop and a grace
echo "after ${SECS}s and a backstop: $n sessions crashed, $(left) of their servers alive (want 0), $(ls "$cfg/sessions" | wc -l) session files in the dir"
kill -TERM "$watch"
wait "$watch" || true
watch=""
