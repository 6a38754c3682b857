#!/usr/bin/env bash
# bench-reap.sh — how long does `reaper reap` take to remove a 1,000-process
# orphan tree that honours SIGTERM? The target: done and confirmed within
# grace + 1 s.
#
# Builds one orphan tree: a shell with N sleep children whose parent exited,
# so the tree is reparented to PID 1 (or the nearest subreaper), in a process
# group of its own. Then runs `reaper reap` with a policy that terminates
# exactly that tree (its sleeps carry a unique argument) and times it; the
# run confirms each process gone before it returns, and the script checks
# the group is empty. Teardown SIGKILLs the group it created, whatever
# happened.
#
# usage: scripts/bench-reap.sh [-n N] [-r REPS] [-g GRACE] [-b REAPER_BINARY]
set -euo pipefail

N=1000
REPS=5
GRACE=5s
BIN=""
while getopts "n:r:g:b:h" opt; do
	case $opt in
	n) N=$OPTARG ;;
	r) REPS=$OPTARG ;;
	g) GRACE=$OPTARG ;;
	b) BIN=$OPTARG ;;
	*) sed -n '2,14p' "$0"; exit 2 ;;
	esac
done

here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
group=""
# members counts the live (not zombie) processes of group $1: killed
# processes stay zombies until their new parent, PID 1, reaps them.
members() { { ps -o stat= -g "$1" || true; } | grep -vc '^Z' || true; }
teardown() {
	[ -n "$group" ] && kill -KILL -- "-$group" 2>/dev/null || true
	rm -rf "$work"
}
trap teardown EXIT
if [ -z "$BIN" ]; then
	BIN=$work/reaper
	(cd "$here" && CGO_ENABLED=0 go build -o "$BIN" ./cmd/reaper)
fi
tag=$((100000 + RANDOM))
cat >"$work/policy.toml" <<TOML
version = 1
[defaults]
min_age = "0s"
grace = "$GRACE"
max_actions = 10
[[rule]]
name = "bench-tree"
when = ["reparented"]
cmdline = '^sh $work/tree.sh'
action = "terminate"
TOML
cat >"$work/tree.sh" <<SH
i=0; while [ \$i -lt $N ]; do sleep $tag & i=\$((i+1)); done; wait
SH

times=()
for ((rep = 0; rep < REPS; rep++)); do
	setsid sh -c "sh $work/tree.sh & exit 0" </dev/null >/dev/null 2>&1 &
	wait $!
	root=""
	for _ in $(seq 1 200); do
		# Field by field: a pattern on the whole line also matched this very
		# awk (its -v argument holds the path), which after a pid wrap sorts
		# first.
		root=$(ps -eo pid=,args= | awk -v p="$work/tree.sh" '$2 == "sh" && $3 == p { print $1; exit }')
		[ -n "$root" ] && [ "$(members "$(ps -o pgid= -p "$root" | tr -d ' ')")" -gt "$N" ] && break
		sleep 0.1
	done
	[ -n "$root" ] || { echo "bench-reap: the tree's root (sh $work/tree.sh) was not found" >&2; exit 1; }
	group=$(ps -o pgid= -p "$root" | tr -d ' ')
	[ -n "$group" ] || { echo "bench-reap: the tree's root $root exited" >&2; exit 1; }
	(( $(members "$group") > N )) || { echo "bench-reap: tree not built" >&2; exit 1; }
	t0=$EPOCHREALTIME
	"$BIN" reap --policy "$work/policy.toml" --lock-file "$work/lock" -o json >"$work/out.json"
	t1=$EPOCHREALTIME
	left=$(members "$group")
	ms=$(( (${t1/./} - ${t0/./}) / 1000 ))
	echo "rep $rep: $(( N + 1 )) processes, reap took $ms ms, $left left"
	(( left == 0 )) || { echo "bench-reap: $left processes survived" >&2; python3 -c "import json,sys; d=json.load(open(sys.argv[1])); [print(f[\"outcome\"], f[\"detail\"], f[\"action\"]) for f in d[\"findings\"]]" "$work/out.json" >&2; exit 1; }
	times+=("$ms")
	group=""
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
echo
echo "reaping a $(( N + 1 ))-process tree that honours SIGTERM: median $median ms over $REPS reps (grace $GRACE; target: grace + 1 s)"
echo "machine: $(nproc) cores, kernel $(uname -r), $(date -u +%Y-%m-%d)"
