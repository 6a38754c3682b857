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
#   reaper.exe watch (a backstop of 10 minutes: what it does sooner, a hint
#     made) sees a client started after it — its session file's write,
#     by ReadDirectoryChangesW — and watches its process; the client
#     killed, its trees are ended on the exit's wait (the figure printed:
#     the seconds from the kill to the audit log's last signal record,
#     which must come before the 10 s poll a watch without exit waits
#     falls back to), the live client's processes all live, and the
#     watch's CPU over a quiet minute is printed.
# Every rule is confined to this run's tag; teardown kills what this
# script started — under wine the process groups it made (setsid), on
# Windows the pids its stand-ins printed — nothing else.
#
# usage: scripts/windows-e2e.sh
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
groups=()
declare -A group # a stand-in's name → its process group (under wine)
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
	cleanup_app
}
cleanup_app() { :; }
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
		group[$1]=$!
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
		kill -KILL "${group[$1]}" # its wine process
	fi
}
kill_client dead
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
kill_client spawning
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

# An MSIX app's container (wine only: a real Windows keeps WindowsApps to
# its packages). The stand-in app runs from below WindowsApps\PACKAGE\,
# makes the job AppInfo would (Container_PACKAGE-<SID>) and starts a
# server, born in it. While the app lives nothing of its container is a
# finding (the control); the app killed, the server holds the container
# of a gone app, is owner-dead by its words, and the reap ends it — by
# a rule that names the [[msix]] entry's owner alone.
if [ -z "$native" ]; then
	pkg="ReaperE2E.P$$_1.0.0.0_x64__reapere2e00000"
	appdir="$prefix/drive_c/Program Files/WindowsApps/$pkg"
	mkdir -p "$appdir" && cp "$work/standin.exe" "$appdir/standin.exe"
	cleanup_app() { rm -rf "$appdir"; }
	cat >"$work/msix.toml" <<POLICY
version = 1
[defaults]
min_age = "0s"
grace = "1s"
[[msix]]
name = "e2e-app"
family = '^ReaperE2E\.P$$_reapere2e00000\$'
[[rule]]
name = "e2e-container"
when = ["owner-dead"]
owner = ["e2e-app"]
cmdline = '$tag-app'
action = "terminate"
POLICY
	mpol=$(winpath "$work/msix.toml")
	setsid "$wine" "C:\\Program Files\\WindowsApps\\$pkg\\standin.exe" app "$tag-app" "$pkg" "$(winpath "$work/standin.exe")" >"$work/app.pids" 2>"$work/app.err" &
	groups+=($!)
	group[app]=$!
	for _ in $(seq 200); do grep -q '^client ' "$work/app.pids" 2>/dev/null && break; sleep 0.05; done
	grep -q '^client ' "$work/app.pids" || fail "the stand-in app did not start: $(cat "$work/app.err")"
	appserver=$(awk '$1 == "server" {print $2}' "$work/app.pids")
	win "$work/reaper.exe" scan -o json --policy "$mpol" >"$work/app-live.json"
	jq -e '[.findings[] | select(.owner == "e2e-app")] | length == 0' "$work/app-live.json" >/dev/null ||
		fail "the live app's container has findings: $(jq -c '.findings[] | {root_pid, owner, evidence}' "$work/app-live.json")"
	kill_client app
	words="holds e2e-app's container of version 1.0.0.0 (job Container_$pkg-"
	has() {
		win "$work/reaper.exe" scan -o json --policy "$mpol" >"$work/app-dead.json"
		jq -e --argjson p "$appserver" --arg w "pid $appserver (standin.exe) $words" \
			'[.findings[] | select(.root_pid == $p and .owner == "e2e-app" and (.reasons | index("owner-dead")) and ([.evidence[] | startswith($w)] | any))] | length == 1' "$work/app-dead.json" >/dev/null
	}
	for _ in $(seq 100); do has && break; sleep 0.1; done
	has || fail "the gone app's server $appserver is not owner-dead by its container: $(jq -c '.findings[] | {root_pid, owner, reasons, evidence}' "$work/app-dead.json")"
	win "$work/reaper.exe" reap -o json --policy "$mpol" --lock-file "$(winpath "$work/reaper.lock")" --audit-log "$(winpath "$work/audit.jsonl")" --journal off >"$work/app-reap.json" ||
		fail "the reap of the container exited $?: $(cat "$work/app-reap.json")"
	jq -e --argjson p "$appserver" '[.findings[] | select(.root_pid == $p and .rule == "e2e-container" and .outcome == "killed")] | length == 1' "$work/app-reap.json" >/dev/null ||
		fail "the container's leftover was not killed by its rule: $(jq -c '.findings[] | {root_pid, rule, outcome, detail}' "$work/app-reap.json")"
	! alive "$appserver" || fail "the container's leftover $appserver lives after the reap"
	echo "msix: the live app's container held no finding; the app killed, its server $appserver 'holds e2e-app's container of version 1.0.0.0', owner-dead, killed by the rule of its [[msix]] owner"
fi

# The watch. Its metrics file says what it watches after each pass.
metrics=$work/watch.prom
owners() { sed -n 's/^reaper_watch_owners{watching="\(true\|false\)"} \([0-9]*\)$/\1 \2/p' "$metrics" 2>/dev/null; }
# waitfor WHAT SECONDS CMD...: CMD, every tenth of a second until it
# succeeds or SECONDS pass.
waitfor() {
	local what=$1 n=$(($2 * 10)); shift 2
	for _ in $(seq "$n"); do "$@" && return; sleep 0.1; done
	watchfail "$what"
}
if [ -n "$native" ]; then
	"$work/reaper.exe" watch --policy "$pol" --backstop 10m --metrics "$(winpath "$metrics")" --lock-file "$(winpath "$work/watch.lock")" \
		--audit-log "$(winpath "$work/watch.jsonl")" --journal off >"$work/watch.out" 2>&1 &
else
	setsid "$wine" "$work/reaper.exe" watch --policy "$pol" --backstop 10m --metrics "$(winpath "$metrics")" --lock-file "$(winpath "$work/watch.lock")" \
		--audit-log "$(winpath "$work/watch.jsonl")" --journal off >"$work/watch.out" 2>&1 &
	groups+=($!)
fi
watcher=$!
first() { [ -n "$(owners)" ]; }
# watchfail WHY: the watch's output and metrics, then fail.
watchfail() {
	echo "-- the watch's output:" >&2; cat "$work/watch.out" >&2
	echo "-- its metrics:" >&2; grep '^reaper_watch' "$metrics" >&2 || true
	fail "$1"
}
waitfor "the watch made no first pass in 60 s" 60 first
[ "$(owners | cut -d' ' -f1)" = true ] || watchfail "the watch watches no exit"
before=$(owners | cut -d' ' -f2)
start watched
watchedpid=$(awk '$1 == "client" {print $2}' "$work/watched.pids")
watchedservers=$(awk '$1 == "server" {print $2}' "$work/watched.pids" | sort -n | tr '\n' ' ')
more() { [ "$(owners | cut -d' ' -f2)" -gt "$before" ]; }
waitfor "the watch did not take up the client started after it (its session file) within 30 s" 30 more
echo "watch: the client $watchedpid started after it is watched (its session file's write was a hint; owners $before → $(owners | cut -d' ' -f2))"
# All users' hints together make at most one pass every 2 s (the watch's
# pace): a kill within 2 s of the pass that took the session up would be
# held that long. A session lives longer than that; so does this one.
sleep 2.5
killed_at=$(date +%s.%N)
kill_client watched
ended() { [ "$(jq -s --arg c "$tag-watched" '[.[] | select(.event == "decision" and .outcome == "killed" and (.cmdline | contains($c)))] | length' "$work/watch.jsonl" 2>/dev/null)" = 2 ]; }
waitfor "the watch did not end the killed client's 2 trees within 8 s (a watch without exit waits polls every 10 s)" 8 ended
# A decision's time is to the second; the signals' are to the nanosecond:
# the last signal sent to the two trees is when they were ended.
last=$(jq -rs --arg c "$tag-watched" '([.[] | select(.event == "decision" and .outcome == "killed" and (.cmdline | contains($c))) | .root_pid]) as $roots |
	[.[] | select(.event == "signal" and (.root_pid as $r | $roots | index($r))) | .time] | max' "$work/watch.jsonl")
took=$(awk -v a="$(date -d "$last" +%s.%N)" -v b="$killed_at" 'BEGIN { printf "%.2f", a - b }')
for p in $watchedservers; do ! alive "$p" || watchfail "the watched client's server $p lives after the watch's pass"; done
lost=0
for p in $livepids; do alive "$p" || lost=$((lost + 1)); done
[ "$lost" = 0 ] || fail "the live client lost $lost of its processes ($livepids) to the watch"
echo "watch: the client $watchedpid killed, its 2 trees ended $took s after (from the kill to the last signal's record in the audit log); the live client's processes all alive"

# The watch's CPU over a quiet minute: nothing exits, nothing is written,
# so it should do nothing. Under wine, the Linux process that runs
# reaper.exe (wine's own work for it included); on Windows, what
# Get-Process says of it.
cpu() {
	if [ -n "$native" ]; then
		powershell.exe -NoProfile -Command "(Get-Process -Id $(cat "$work/watch.pid")).CPU"
	else
		awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f\n", ($14 + $15) / hz }' "/proc/$watcher/stat"
	fi
}
if [ -n "$native" ]; then
	powershell.exe -NoProfile -Command "(Get-Process reaper | Sort-Object StartTime -Descending | Select-Object -First 1).Id" | tr -d '\r' >"$work/watch.pid"
fi
c0=$(cpu)
sleep 60
c1=$(cpu)
echo "watch: $(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.3f", b - a }') s of CPU over a quiet minute"
