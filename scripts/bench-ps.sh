#!/usr/bin/env bash
# bench-ps.sh — what does `reaper ps` cost against `reaper scan`, on the
# same table?
#
# Builds N extra real processes: S Claude Code-shaped sessions (a process
# its session file names, in a private HOME, each with K children that
# carry its session id: servers and jobs) and the rest plain sleeps in
# fan trees. Then runs `reaper ps -o json` and `reaper scan -o json`
# alternately, REPS times each, and prints the median wall time of each
# and the median of the per-rep ratios ps/scan. ps reads what a scan
# reads, plus each session process's PSS (smaps_rollup) and command line.
#
# Every process is in a process group of this script's; teardown SIGKILLs
# exactly those groups (never anything by name) and runs on every exit.
#
# usage: scripts/bench-ps.sh [-n N] [-s SESSIONS] [-k CHILDREN] [-r REPS] [-b REAPER_BINARY]
#   defaults: N=1000, SESSIONS=10, CHILDREN=8, REPS=15, the binary built from this checkout.
set -euo pipefail
trap 'echo "bench-ps: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

N=1000
S=10
K=8
REPS=15
BIN=""
while getopts "n:s:k:r:b:h" opt; do
	case $opt in
	n) N=$OPTARG ;;
	s) S=$OPTARG ;;
	k) K=$OPTARG ;;
	r) REPS=$OPTARG ;;
	b) BIN=$OPTARG ;;
	*) sed -n '2,17p' "$0"; exit 2 ;;
	esac
done

. "$(dirname "$0")/bench-lib.sh"
home=$work/home
mkdir -p "$home/.claude/sessions"

# spawn CMD…: starts CMD in a new session (its own process group) and
# records the group.
spawn() {
	setsid "$@" </dev/null >/dev/null 2>&1 &
	groups+=($!)
}

for s in $(seq 1 "$S"); do
	spawn bash -c "export CLAUDE_CODE_SESSION_ID=bench-$s; for k in \$(seq 1 $K); do sleep 3600 & done; exec -a claude sleep 3600"
done
rest=$((N - S * (K + 1)))
fans=4
per=$((rest > 0 ? rest / fans : 0))
for f in $(seq 1 "$fans"); do
	spawn bash -c "for k in \$(seq 1 $per); do sleep 3600 & done; exec sleep 3600"
done

# Wait for the population, then write each session's file, naming its
# process with its start as Claude Code does.
want=$((S * (K + 1) + fans * (per + 1)))
for _ in $(seq 1 600); do
	have=0
	for g in "${groups[@]}"; do have=$((have + $(pgrep -c -g "$g" || true))); done
	[ "$have" -ge "$want" ] && break
	sleep 0.1
done
now=$(($(date +%s) * 1000))
for g in "${groups[@]:0:$S}"; do
	start=$(awk '{print $22}' "/proc/$g/stat")
	printf '{"pid":%d,"sessionId":"bench-%d","cwd":"/w","startedAt":%d,"procStart":"%s","kind":"interactive"}' \
		"$g" "$g" "$now" "$start" >"$home/.claude/sessions/$g.json"
done
echo "population: $have extra processes ($S sessions of $((K + 1)), the rest sleeps), $(ls /proc | grep -c '^[0-9]') in the table"

ps_cmd=(env HOME="$home" CLAUDE_CONFIG_DIR= "$BIN" ps -o json)
scan_cmd=(env HOME="$home" CLAUDE_CONFIG_DIR= "$BIN" scan -o json)
sessions=$("${ps_cmd[@]}" | grep -c '"state": "live"\|"state": "headless"\|"state": "background"' || true)
echo "reaper ps sees $sessions sessions"

ms() { local a b; a=$(date +%s%N); "$@" >/dev/null 2>&1 || true; b=$(date +%s%N); echo $(((b - a) / 1000)); }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ps_t=() scan_t=() ratio=()
for _ in $(seq 1 "$REPS"); do
	if [ $((RANDOM % 2)) -eq 0 ]; then
		p=$(ms "${ps_cmd[@]}"); s=$(ms "${scan_cmd[@]}")
	else
		s=$(ms "${scan_cmd[@]}"); p=$(ms "${ps_cmd[@]}")
	fi
	ps_t+=("$p") scan_t+=("$s")
	ratio+=("$(awk -v p="$p" -v s="$s" 'BEGIN {printf "%.3f", p / s}')")
done
printf '%-24s %12s\n' "" "median ms"
printf '%-24s %12s\n' "reaper ps -o json" "$(awk -v u="$(median "${ps_t[@]}")" 'BEGIN {printf "%.1f", u / 1000}')"
printf '%-24s %12s\n' "reaper scan -o json" "$(awk -v u="$(median "${scan_t[@]}")" 'BEGIN {printf "%.1f", u / 1000}')"
echo "ps/scan, median of $REPS paired runs: $(median "${ratio[@]}")"
