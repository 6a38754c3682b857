#!/usr/bin/env bash
# bench-storm.sh — what watching for fork storms costs a watch: the CPU of
# two `reaper watch --dry-run` side by side (BASE and NEW binaries, each
# its own lock and home, a rule confined to this run's tag so nothing is
# theirs to act on) over SECS seconds idle, then over SECS seconds of RATE
# short-lived processes a second (one shell starting /bin/true), each
# watch's utime+stime from /proc/PID/stat. Linux; root for the fork
# events on kernels before 6.6.
#
# usage: scripts/bench-storm.sh BASE_BINARY NEW_BINARY [SECS] [RATE]
set -euo pipefail
base=$1 new=$2 secs=${3:-30} rate=${4:-500}
tag=benchstorm$$
dir=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
printf 'version = 1\n[[rule]]\nname = "x"\nwhen = ["reparented"]\ncmdline = "%s"\naction = "report"\n' "$tag" >"$dir/policy.toml"
for b in "$base" "$new"; do
	k=${#pids[@]}
	mkdir -p "$dir/home$k"
	HOME=$dir/home$k "$b" watch --dry-run --policy "$dir/policy.toml" --lock-file "$dir/w$k.lock" --journal off >/dev/null 2>"$dir/w$k.err" &
	pids+=($!)
done
sleep 3
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
measure() {
	local b0 n0 b1 n1
	b0=$(cpu "${pids[0]}") n0=$(cpu "${pids[1]}")
	"$@"
	b1=$(cpu "${pids[0]}") n1=$(cpu "${pids[1]}")
	awk -v b=$((b1 - b0)) -v n=$((n1 - n0)) -v hz="$hz" 'BEGIN { printf "base %.2f s, new %.2f s of CPU\n", b / hz, n / hz }'
}
echo -n "idle ${secs}s: "
measure sleep "$secs"
echo -n "${rate} forks a second for ${secs}s: "
measure bash -c "end=\$((SECONDS+$secs)); while [ \$SECONDS -lt \$end ]; do for i in \$(seq $((rate / 10))); do /bin/true & done; wait; sleep 0.1; done"
echo "storms said: base $(grep -c 'fork storm:' "$dir/w0.err" || true), new $(grep -c 'fork storm:' "$dir/w1.err" || true)"
