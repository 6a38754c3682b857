#!/usr/bin/env bash
# windows-e2e.sh — reaper.exe against a client's leftovers, under wine on
# Linux, or on Windows itself from Git Bash (the GitHub runner's): two
# stand-in clients (testdata/windows/standin) each record a session as
# Claude Code does on Windows (its session file, its servers marked with
# the session's id) and start two stdio servers, one of which starts a
# child; one client is killed
# (SIGKILL of its wine process under wine, taskkill /F on Windows:
# TerminateProcess either way), the other lives. Then:
#   the control: a second later the dead client's servers are alive — no
#     one ends them on Windows;
#   reaper.exe scan finds both of its trees, reparented and owner-dead, the
#     dead client's pid and its session file in the words, and nothing of
#     the live client;
#   reaper.exe reap suspends each tree, puts it in a job object of its own
#     (what it starts from then on is born inside) and ends it whole
#     (every member gone, the scan after it finds nothing), and the live
#     client's three processes all live.
# Every rule is confined to this run's tag; teardown kills what this
# script started — under wine the process groups it made (setsid), on
# Windows the pids its stand-ins printed — nothing else.
#
# usage: scripts/windows-e2e.sh
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
groups=()
case "$(uname -s)" in
MINGW* | MSYS* | CYGWIN*)
	native=1
	win() { "$@"; }
	winpath() { cygpath -w "$1"; }
	;;
*)
	native=
	prefix=$("$here/scripts/wine-setup.sh")
	export WINEPREFIX=$prefix WINEDEBUG=-all
	wine=/usr/lib/wine/wine64
	win() { "$wine" "$@"; }
	winpath() { printf 'Z:%s' "${1//\//\\}"; }
	;;
esac
teardown() {
	for g in "${groups[@]+"${groups[@]}"}"; do kill -KILL -- "-$g" 2>/dev/null || true; done
	if [ -n "$native" ]; then
		# By pid and image both: a pid whose stand-in is gone may name
		# another process by now.
		for p in $(awk '{print $2}' "$work"/*.pids 2>/dev/null); do
			taskkill //F //FI "PID eq $p" //FI "IMAGENAME eq standin.exe" >/dev/null 2>&1 || true
		done
	fi
	rm -rf "$work"
}
trap teardown EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$here" && GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go build -o "$work/reaper.exe" ./cmd/reaper &&
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go build -o "$work/standin.exe" ./testdata/windows/standin)
tag="wine-e2e-$$-$(date +%s%N)"
cat >"$work/policy.toml" <<POLICY
version = 1
[defaults]
min_age = "0s"
grace = "1s"
[[rule]]
name = "standin"
when = ["reparented"]
kind = ["mcp"]
cmdline = '$tag'
action = "terminate"
POLICY
pol=$(winpath "$work/policy.toml")
# The stand-ins' Claude Code config dir, this run's own: reaper reads it
# from its environment and from the servers' (CLAUDE_CONFIG_DIR).
CLAUDE_CONFIG_DIR=$(winpath "$work/claude")
export CLAUDE_CONFIG_DIR

# start NAME: a stand-in client (under wine, in a session of its own); its
# pids in NAME.pids.
start() {
	if [ -n "$native" ]; then
		"$work/standin.exe" client "$tag-$1" ${2:-} >"$work/$1.pids" 2>"$work/$1.err" &
	else
		setsid "$wine" "$work/standin.exe" client "$tag-$1" ${2:-} >"$work/$1.pids" 2>"$work/$1.err" &
		groups+=($!)
	fi
	for _ in $(seq 200); do grep -q '^client ' "$work/$1.pids" 2>/dev/null && return; sleep 0.05; done
	fail "stand-in $1 did not start: $(cat "$work/$1.err")"
}
start dead
start live
deadpid=$(awk '$1 == "client" {print $2}' "$work/dead.pids")
deadservers=$(awk '$1 == "server" {print $2}' "$work/dead.pids" | sort -n | tr '\n' ' ')
livepids=$(awk '$1 != "" {print $2}' "$work/live.pids" | sort -n | tr '\n' ' ')
# kill NAME: the stand-in client NAME alone; its servers live on.
kill_client() {
	if [ -n "$native" ]; then
		taskkill //F //FI "PID eq $(awk '$1 == "client" {print $2}' "$work/$1.pids")" //FI "IMAGENAME eq standin.exe" >/dev/null
	else
		kill -KILL "${groups[$2]}" # its wine process
	fi
}
kill_client dead 0
sleep 1

alive() { win "$work/reaper.exe" explain "$1" >/dev/null 2>&1; }
for p in $deadservers; do alive "$p" || fail "control: the dead client's server $p did not outlive it"; done
echo "control: the dead client $deadpid's servers $deadservers live on without a reaper"

# The scan, once the first server's child has started too (it is started
# after its server printed its pid): up to 20 s.
for _ in $(seq 40); do
	win "$work/reaper.exe" scan -o json --policy "$pol" >"$work/scan.json"
	[ "$(jq '[.findings[].pids[]] | length' "$work/scan.json")" -ge 3 ] && break
	sleep 0.5
done
roots=$(jq -r '[.findings[].root_pid] | sort | map(tostring) | join(" ")' "$work/scan.json")
[ "$roots " = "$deadservers" ] || fail "scan found roots '$roots', want the dead client's servers '$deadservers'"
jq -e --arg w "its parent $deadpid exited" '[.findings[] | select((.reasons | index("reparented")) and (.evidence[0] | startswith($w)))] | length == 2' "$work/scan.json" >/dev/null ||
	fail "the findings do not say the dead parent $deadpid: $(jq -c '.findings[] | {root_pid, reasons, evidence}' "$work/scan.json")"
jq -e --arg f "sessions\\$deadpid.json" '[.findings[] | select((.reasons | index("owner-dead")) and ([.evidence[] | contains($f)] | any))] | length == 2' "$work/scan.json" >/dev/null ||
	fail "the findings are not owner-dead with the dead client's session file: $(jq -c '.findings[] | {root_pid, reasons, evidence}' "$work/scan.json")"
members=$(jq '[.findings[].pids[]] | length' "$work/scan.json")
[ "$members" = 3 ] || fail "the trees hold $members processes, want 3 (two servers and a child)"
echo "scan: 2 trees, reparented and owner-dead, 'its parent $deadpid exited', its session file sessions\\$deadpid.json; 3 processes; none of the live client's"

win "$work/reaper.exe" reap -o json --policy "$pol" --lock-file "$(winpath "$work/reaper.lock")" --audit-log "$(winpath "$work/audit.jsonl")" --journal off >"$work/reap.json" ||
	fail "reap exited $?: $(cat "$work/reap.json")"
killed=$(jq '[.findings[] | select(.outcome == "killed")] | length' "$work/reap.json")
jq -e '[.findings[] | select(.detail | test("confined in a job object of its own"))] | length == 2' "$work/reap.json" >/dev/null ||
	fail "the trees were not put in job objects before they were ended: $(jq -c '.findings[] | {root_pid, detail}' "$work/reap.json")"
[ "$killed" = 2 ] || fail "reap killed $killed trees, want 2: $(jq -c '.findings[] | {root_pid, outcome, detail}' "$work/reap.json")"
for p in $(jq -r '.findings[].pids[]' "$work/scan.json"); do
	! alive "$p" || fail "member $p lives after the reap"
done
after=$(win "$work/reaper.exe" scan -o json --policy "$pol" | jq '.findings | length')
[ "$after" = 0 ] || fail "the scan after the reap finds $after trees"
lost=0
for p in $livepids; do alive "$p" || lost=$((lost + 1)); done
[ "$lost" = 0 ] || fail "the live client lost $lost of its processes ($livepids)"
echo "reap: 2 trees, each suspended and put in a job object of its own, killed; every member gone, the scan after finds none; the live client's $(echo $livepids | wc -w) processes all alive"

# A tree that forks while it is being ended: a server that starts a leaf
# every 20 ms. Its client killed, the reap suspends what it walked, puts
# it in a job, and ends the job: whatever was born since is inside. The
# scan after it must find nothing (a leaf that escaped would be an orphan
# the rule names).
start spawning spawning
kill_client spawning 2
sleep 1
win "$work/reaper.exe" reap -o json --policy "$pol" --lock-file "$(winpath "$work/reaper.lock")" --audit-log "$(winpath "$work/audit.jsonl")" --journal off >"$work/reap2.json" ||
	fail "reap of the spawning tree exited $?: $(jq -c '.findings[] | {root_pid, outcome, detail}' "$work/reap2.json")"
n=$(jq '[.findings[].pids[]] | length' "$work/reap2.json")
for _ in 1 2 3; do
	left=$(win "$work/reaper.exe" scan -o json --policy "$pol" | jq '[.findings[].pids[]] | length')
	[ "$left" = 0 ] && break
	sleep 1
done
[ "$left" = 0 ] || fail "$left processes of the spawning tree outlived its reap"
echo "a tree that forks while it is ended: $n processes at the reap, in a job of its own, none left after it"
