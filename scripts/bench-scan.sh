#!/usr/bin/env bash
# bench-scan.sh — how fast is `reaper scan` against ps, and against the floor,
# on a full process table?
#
# Builds a population of N extra real processes, then times `reaper scan`,
# `ps -e -o pid,ppid,pgid,sid,tty,stat,lstart,rss,uid,args` and the floor
# (scripts/statfloor: one openat+read+close of every /proc/PID/stat, on as
# many goroutines as reaper's stat pass, nothing parsed) alternately, in a
# random order each rep so all three see the same machine state, and
# prints the medians, the medians of the per-rep ratios to ps and to the
# floor, and the peak RSS of each: the
# process's own VmHWM at its exit (scripts/peakrss), not GNU time's %M,
# which is the larger of a process's peak and its largest reaped child's —
# a root reaper's reader children would be counted as the reaper.
#
# The population (fan trees, deep chains and an orphan tree, as a busy host has):
#   4 fan trees   — a sleep with many sleep children          (8/10 of N)
#   2 deep chains — each level a sleep whose child is the next (1/10 of N)
#   1 orphan tree — sleeps whose parent exited: reparented     (1/10 of N)
# Each tree is its own session and process group; teardown SIGKILLs exactly
# those groups (never anything by name) and runs on every exit.
#
# With -u USERS (as root) it also times `reaper scan` with USERS users'
# real-shaped OpenClaw state in their homes, each user running one process
# (a scan reads only the state of users who own one) (scripts/mkstate: a dead
# gateway's lock, leases, codex rows, 200 exec task rows and a session
# store each), which a root reaper reads in one reader child per user: both
# reaper rows then run in a private mount namespace, one with the plain
# /etc/passwd and one whose passwd adds the users, and the state row says
# what the read added.
#
# With -a the orphans' stdin is a pipe whose writer has exited, as a dead
# client's MCP servers' is: the scan asks the kernel about each (the stdin
# peer) and finds it abandoned. Without it their stdin is /dev/null.
#
# usage: scripts/bench-scan.sh [-n N] [-r REPS] [-b REAPER_BINARY] [-u USERS] [-a]
#   defaults: N=10000, REPS=15, the binary built from this checkout, no users.
set -euo pipefail
# Any failure says where, instead of ending the series silently.
trap 'echo "bench-scan: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

N=10000
REPS=15
BIN=""
USERS=0
ABANDONED=0
while getopts "n:r:b:u:ah" opt; do
	case $opt in
	n) N=$OPTARG ;;
	r) REPS=$OPTARG ;;
	b) BIN=$OPTARG ;;
	u) USERS=$OPTARG ;;
	a) ABANDONED=1 ;;
	*) sed -n '2,36p' "$0"; exit 2 ;;
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

if [ -z "$BIN" ]; then
	BIN=$work/reaper
	(cd "$here" && CGO_ENABLED=0 go build -o "$BIN" ./cmd/reaper)
fi
FLOOR=$work/statfloor
(cd "$here" && CGO_ENABLED=0 go build -o "$FLOOR" ./scripts/statfloor)
PEAKRSS=$work/peakrss
(cd "$here" && CGO_ENABLED=0 go build -o "$PEAKRSS" ./scripts/peakrss)
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
i=0; while [ $i -lt "$1" ]; do sleep 100000 <&3 & i=$((i+1)); done
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
if [ "$ABANDONED" = 1 ]; then
	# Each orphan's stdin a pipe whose writer (true) has exited: every one
	# is asked of the kernel (the stdin peer) and found abandoned.
	setsid sh "$work/orphans.sh" "$orph" 3< <(true) </dev/null >/dev/null 2>&1 &
	groups+=("$!")
	disown
else
	start_tree "$work/orphans.sh" "$orph" 3</dev/null
fi
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
state_cmd=()
if (( USERS > 0 )); then
	[ "$(id -u)" = 0 ] || { echo "bench-scan: -u needs root (homes of other users, a mount namespace)" >&2; exit 1; }
	need unshare "util-linux"
	mkdir -p "$work/state"
	chmod 755 "$work"
	(cd "$here" && CGO_ENABLED=0 go build -o "$work/mkstate" ./scripts/mkstate)
	"$work/mkstate" -dir "$work/state" -users "$USERS" ${MKSTATE_ARGS:-} >"$work/users"
	# Each user runs one process: a scan reads the state only of users who
	# own a process (a user's state speaks for no one else's).
	need setpriv "util-linux"
	while IFS=: read -r _ _ uid _; do
		setsid setpriv --reuid="$uid" --regid="$uid" --clear-groups sleep 100000 </dev/null >/dev/null 2>&1 &
		groups+=("$!"); disown
	done <"$work/users"
	cp /etc/passwd "$work/passwd.plain"
	cat /etc/passwd "$work/users" >"$work/passwd.state"
	printf '%s\n' 'mount --bind "$1" /etc/passwd && shift && exec "$@"' >"$work/ns.sh"
	reaper_cmd=(unshare --mount --propagation private sh "$work/ns.sh" "$work/passwd.plain" "$BIN" scan)
	state_cmd=(unshare --mount --propagation private sh "$work/ns.sh" "$work/passwd.state" "$BIN" scan)
	"${state_cmd[@]}" --output json | grep '"errors": \[\]' >/dev/null || { echo "bench-scan: the users' state did not read cleanly" >&2; exit 1; }
	echo "state: $USERS users, $(du -sh "$work/state" | cut -f1) in their homes"
fi

# BENCH_HOLD=FILE: hold the population (and state) while FILE exists, to
# profile a command against it by hand; the commands are printed.
if [ -n "${BENCH_HOLD:-}" ]; then
	echo "holding while $BENCH_HOLD exists: ${reaper_cmd[*]} | ${state_cmd[*]}"
	touch "$BENCH_HOLD"
	while [ -e "$BENCH_HOLD" ]; do sleep 1; done
fi

# warm-up rounds, then interleaved reps in a random order
for _ in 1 2; do "${ps_cmd[@]}" >/dev/null; "${reaper_cmd[@]}" >/dev/null; "${floor_cmd[@]}" >/dev/null; done
ps_t=(); re_t=(); fl_t=(); st_t=(); ratio=(); fratio=(); added=()
which_all="ps reaper floor"
(( USERS > 0 )) && which_all="$which_all state"
for ((i = 0; i < REPS; i++)); do
	declare -A t=()
	for which in $(printf '%s\n' $which_all | shuf); do
		case $which in
		ps) t[ps]=$(ms "${ps_cmd[@]}") ;;
		reaper) t[reaper]=$(ms "${reaper_cmd[@]}") ;;
		floor) t[floor]=$(ms "${floor_cmd[@]}") ;;
		state) t[state]=$(ms "${state_cmd[@]}") ;;
		esac
	done
	ps_t+=("${t[ps]}"); re_t+=("${t[reaper]}"); fl_t+=("${t[floor]}")
	if (( USERS > 0 )); then
		st_t+=("${t[state]}")
		added+=("$(awk -v s="${t[state]}" -v r="${t[reaper]}" 'BEGIN { printf "%.1f", s - r }')")
	fi
	ratio+=("$(awk -v r="${t[reaper]}" -v p="${t[ps]}" 'BEGIN { printf "%.3f", r / p }')")
	fratio+=("$(awk -v r="${t[reaper]}" -v f="${t[floor]}" 'BEGIN { printf "%.3f", r / f }')")
	unset t
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
peak() { # median peak RSS in MiB of 5 runs
	local k v=()
	for k in 1 2 3 4 5; do v+=("$("$PEAKRSS" "$@" 2>&1 >/dev/null | tail -n 1)"); done
	awk -v k="$(median "${v[@]}")" 'BEGIN { printf "%.1f", k / 1024 }'
}
"${reaper_cmd[@]}" >/dev/null || { echo "bench-scan: reaper scan failed" >&2; exit 1; }
fl_ps=()
for ((i = 0; i < REPS; i++)); do fl_ps+=("$(awk -v f="${fl_t[i]}" -v p="${ps_t[i]}" 'BEGIN { printf "%.3f", f / p }')"); done

printf '\n%-40s %10s %13s %8s %9s\n' "command (N=$N, $REPS reps)" "median ms" "peak RSS MiB" "× ps" "× floor"
printf '%-40s %10s %13s %8s %9s\n' "ps -e -o pid,ppid,pgid,sid,tty,stat,…" "$(median "${ps_t[@]}")" "$(peak "${ps_cmd[@]}")" "1.00" ""
printf '%-40s %10s %13s %8s %9s\n' "floor (every /proc/PID/stat, $(nproc) thr.)" "$(median "${fl_t[@]}")" "$(peak "${floor_cmd[@]}")" "$(median "${fl_ps[@]}")" "1.00"
printf '%-40s %10s %13s %8s %9s\n' "reaper scan" "$(median "${re_t[@]}")" "$(peak "${reaper_cmd[@]}")" "$(median "${ratio[@]}")" "$(median "${fratio[@]}")"
if (( USERS > 0 )); then
	printf '%-40s %10s %13s %8s %9s\n' "reaper scan, $USERS users' state" "$(median "${st_t[@]}")" "$(peak "${state_cmd[@]}")" "" ""
	echo "the users' state added $(median "${added[@]}") ms (median of the per-rep differences); the peak RSS is the reaper's own, each reader child is bounded by its own limits"
fi
echo
echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r), $(date -u +%Y-%m-%d)"
