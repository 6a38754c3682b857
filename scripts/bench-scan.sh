#!/usr/bin/env bash
# bench-scan.sh — how fast is `reaper scan` against ps, and against the floor,
# on a full process table?
#
# Builds a population of N extra real processes, then times `reaper scan`,
# `ps -e -o pid,ppid,pgid,sid,tty,stat,lstart,rss,uid,args` and the floor
# (scripts/statfloor: one openat+read+close of every /proc/PID/stat on one
# thread, nothing parsed) alternately, in a random order each rep so all
# three see the same machine state, and prints the medians, the medians of
# the per-rep ratios to ps and to the floor, and the peak RSS of each (GNU
# time, which forks, so the figure is the child's own).
#
# The population (fan trees, deep chains and an orphan tree, as a busy host has):
#   4 fan trees   — a sleep with many sleep children          (8/10 of N)
#   2 deep chains — each level a sleep whose child is the next (1/10 of N)
#   1 orphan tree — sleeps whose parent exited: reparented     (1/10 of N)
# Each tree is its own session and process group; teardown SIGKILLs exactly
# those groups (never anything by name) and runs on every exit.
#
# usage: scripts/bench-scan.sh [-n N] [-r REPS] [-b REAPER_BINARY]
#   defaults: N=10000, REPS=15, the binary built from this checkout.
set -euo pipefail
# Any failure says where, instead of ending the series silently.
trap 'echo "bench-scan: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

N=10000
REPS=15
BIN=""
while getopts "n:r:b:h" opt; do
	case $opt in
	n) N=$OPTARG ;;
	r) REPS=$OPTARG ;;
	b) BIN=$OPTARG ;;
	*) sed -n '2,20p' "$0"; exit 2 ;;
	esac
done

here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
groups=()
# members counts the processes of group $1 (ps exits 1 when there are none).
members() { { ps -o pid= -g "$1" || true; } | wc -l; }
teardown() {
	local g left tries=0
	for g in "${groups[@]}"; do kill -KILL -- "-$g" 2>/dev/null || true; done
	# Wait until the groups are empty (their zombies reaped), so the next
	# run starts from a quiet table.
	while (( tries++ < 300 )); do
		left=0
		for g in "${groups[@]}"; do left=$(( left + $(members "$g") )); done
		(( left == 0 )) && break
		sleep 0.1
	done
	rm -rf "$work"
}
trap teardown EXIT

need() { command -v "$1" >/dev/null || { echo "bench-scan: needs $1 ($2)" >&2; exit 1; }; }
need setsid "util-linux"
need ps "procps"
[ -x /usr/bin/time ] || { echo "bench-scan: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }

if [ -z "$BIN" ]; then
	BIN=$work/reaper
	(cd "$here" && CGO_ENABLED=0 go build -o "$BIN" ./cmd/reaper)
fi
FLOOR=$work/statfloor
(cd "$here" && CGO_ENABLED=0 go build -o "$FLOOR" ./scripts/statfloor)
# With no policy file where reaper looks, it uses the embedded default, as a
# newcomer's `reaper scan` does.
export XDG_CONFIG_HOME=$work/config

ulimit -u unlimited 2>/dev/null || true
pid_max=$(cat /proc/sys/kernel/pid_max)
if (( N + 1000 > pid_max )); then
	echo "bench-scan: N=$N does not fit pid_max=$pid_max" >&2
	exit 1
fi

cat >"$work/chain.sh" <<'SH'
# one level of a chain: start the next level, then become a sleep
if [ "$1" -gt 1 ]; then sh "$0" $(( $1 - 1 )) & fi
exec sleep 100000
SH
cat >"$work/fan.sh" <<'SH'
i=0; while [ $i -lt "$1" ]; do sleep 100000 & i=$((i+1)); done
exec sleep 100000
SH
cat >"$work/orphans.sh" <<'SH'
i=0; while [ $i -lt "$1" ]; do sleep 100000 & i=$((i+1)); done
SH

# procs counts the entries of /proc: the glob reads the directory once and
# stats nothing, so a pid that exits meanwhile cannot fail the script (ls -d
# did, under set -e, and a 20,000-process series ended without a table).
procs() { local n=0 d; for d in /proc/[0-9]*; do n=$((n + 1)); done; echo "$n"; }
before=$(procs)
chain=$(( N / 20 ))
orph=$(( N / 10 ))
fan=$(( (N - 2 * chain - orph) / 4 - 1 ))
start_tree() { setsid sh "$@" </dev/null >/dev/null 2>&1 & groups+=("$!"); disown; }
for _ in 1 2 3 4; do start_tree "$work/fan.sh" "$fan"; done
start_tree "$work/chain.sh" "$chain"
start_tree "$work/chain.sh" "$chain"
start_tree "$work/orphans.sh" "$orph"
want=$(( 4 * (fan + 1) + 2 * chain + orph ))

count() {
	local n=0 g
	for g in "${groups[@]}"; do n=$(( n + $(members "$g") )); done
	echo "$n"
}
deadline=$(( SECONDS + 600 ))
while (( $(count) < want )); do
	(( SECONDS < deadline )) || { echo "bench-scan: population stuck at $(count)/$want" >&2; exit 1; }
	sleep 1
done
table=$(procs)
echo "population: $want extra processes ($before before, $table in the table)"

ms() { # wall milliseconds of one run of "$@", output discarded
	local t0=$EPOCHREALTIME
	"$@" >/dev/null 2>&1
	local t1=$EPOCHREALTIME
	echo "$(( (${t1/./} - ${t0/./}) / 1000 )).$(( (${t1/./} - ${t0/./}) % 1000 / 100 ))"
}
ps_cmd=(ps -e -o pid,ppid,pgid,sid,tty,stat,lstart,rss,uid,args)
reaper_cmd=("$BIN" scan)
floor_cmd=("$FLOOR")

# warm-up rounds, then interleaved reps in a random order
for _ in 1 2; do "${ps_cmd[@]}" >/dev/null; "${reaper_cmd[@]}" >/dev/null; "${floor_cmd[@]}" >/dev/null; done
ps_t=(); re_t=(); fl_t=(); ratio=(); fratio=()
for ((i = 0; i < REPS; i++)); do
	declare -A t=()
	for which in $(printf '%s\n' ps reaper floor | shuf); do
		case $which in
		ps) t[ps]=$(ms "${ps_cmd[@]}") ;;
		reaper) t[reaper]=$(ms "${reaper_cmd[@]}") ;;
		floor) t[floor]=$(ms "${floor_cmd[@]}") ;;
		esac
	done
	ps_t+=("${t[ps]}"); re_t+=("${t[reaper]}"); fl_t+=("${t[floor]}")
	ratio+=("$(awk -v r="${t[reaper]}" -v p="${t[ps]}" 'BEGIN { printf "%.3f", r / p }')")
	fratio+=("$(awk -v r="${t[reaper]}" -v f="${t[floor]}" 'BEGIN { printf "%.3f", r / f }')")
	unset t
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
peak() { # median peak RSS in MiB of 5 runs
	local k v=()
	for k in 1 2 3 4 5; do v+=("$(/usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1)"); done
	awk -v k="$(median "${v[@]}")" 'BEGIN { printf "%.1f", k / 1024 }'
}
"${reaper_cmd[@]}" >/dev/null || { echo "bench-scan: reaper scan failed" >&2; exit 1; }
fl_ps=()
for ((i = 0; i < REPS; i++)); do fl_ps+=("$(awk -v f="${fl_t[i]}" -v p="${ps_t[i]}" 'BEGIN { printf "%.3f", f / p }')"); done

printf '\n%-40s %10s %13s %8s %9s\n' "command (N=$N, $REPS reps)" "median ms" "peak RSS MiB" "× ps" "× floor"
printf '%-40s %10s %13s %8s %9s\n' "ps -e -o pid,ppid,pgid,sid,tty,stat,…" "$(median "${ps_t[@]}")" "$(peak "${ps_cmd[@]}")" "1.00" ""
printf '%-40s %10s %13s %8s %9s\n' "floor (every /proc/PID/stat, 1 thread)" "$(median "${fl_t[@]}")" "$(peak "${floor_cmd[@]}")" "$(median "${fl_ps[@]}")" "1.00"
printf '%-40s %10s %13s %8s %9s\n' "reaper scan" "$(median "${re_t[@]}")" "$(peak "${reaper_cmd[@]}")" "$(median "${ratio[@]}")" "$(median "${fratio[@]}")"
echo
echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r), $(date -u +%Y-%m-%d)"
