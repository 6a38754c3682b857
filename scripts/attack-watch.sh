#!/usr/bin/env bash
# attack-watch.sh — two of round 8's attacks on a root `reaper watch`
# (docs/threat-model.md, 34 and 39), each in a PID namespace of its own,
# with two ordinary users A (uid 61001) and B (uid 61002):
#
#   flood  the watch's open-file limit is 4,096 (a unit's LimitNOFILE);
#          A holds 4,200 connections to its --metrics-listen, each having
#          sent one keep-alive GET /healthz; then B's stand-in claude is
#          SIGKILLed. Printed: whether root's /healthz and /metrics answer,
#          the watch's descriptors and RSS, how long B's orphaned server
#          lived, and the watch's "too many open files" lines.
#   hints  A's stand-in claude and B's are SIGKILLed 1.2 s apart, TRIALS
#          times (31 s apart, each user's budget of hints back); printed:
#          how long B's orphaned server lived each time. The first trial
#          is a warm-up: B's config dir, named only by its sessions'
#          CLAUDE_CONFIG_DIR, is found at the watch's first backstop.
#
# A stand-in claude is a shell titled claude that writes its session file
# as Claude Code does (pid, procStart) and starts one server carrying the
# session's id. The policy is the shipped example with min_age 0. Each
# case runs as PID 1 of its namespace and ends with `kill -9 -1` there:
# nothing outside it is touched. Root only; needs setpriv, unshare,
# python3 and bc.
#
# usage: scripts/attack-watch.sh flood|hints [-b REAPER_BINARY] [-n TRIALS]
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
case=${1:-}
shift || true
BIN="" TRIALS=11
while getopts "b:n:h" opt; do
	case $opt in
	b) BIN=$OPTARG ;;
	n) TRIALS=$OPTARG ;;
	*) sed -n '2,25p' "$0"; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "attack-watch: run as root" >&2; exit 2; }
case $case in flood | hints) ;; *) sed -n '2,25p' "$0"; exit 2 ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "$BIN" ]; then
	BIN=$work/reaper
	(cd "$here" && CGO_ENABLED=0 go build -o "$BIN" ./cmd/reaper)
fi
chmod 755 "$work"
sed 's/^min_age = "2m"/min_age = "0s"/' "$here/packaging/policy.example.toml" >"$work/policy.toml"

# Everything below runs as PID 1 of a new PID namespace.
inner=$(
	cat <<'INNER'
set -u
W=$1 BIN=$2 CASE=$3 TRIALS=$4
A=61001 B=61002
for u in a b; do mkdir -p "$W/$u/sessions"; done
chown -R $A:$A "$W/a"; chown -R $B:$B "$W/b"; chmod -R 700 "$W/a" "$W/b"
# start UID CFGDIR N: a stand-in claude of UID's; prints "CLAUDE SERVER".
start() {
	local uid=$1 cfg=$2 id; id=$(printf '5e55a0c0-0000-4000-8000-%012d' "$3")
	setpriv --reuid=$uid --regid=$uid --clear-groups env CLAUDE_CONFIG_DIR=$cfg setsid bash -c "exec -a claude bash -c '
		start=\$(awk \"{print \\\$22}\" /proc/\$\$/stat)
		printf \"{\\\"pid\\\":%d,\\\"sessionId\\\":\\\"$id\\\",\\\"cwd\\\":\\\"/\\\",\\\"startedAt\\\":%d,\\\"procStart\\\":\\\"%s\\\",\\\"kind\\\":\\\"interactive\\\"}\" \$\$ \$((\$(date +%s%N) / 1000000)) \$start > $cfg/sessions/\$\$.json
		(CLAUDECODE=1 CLAUDE_CODE_SESSION_ID=$id CLAUDE_CONFIG_DIR=$cfg exec -a attack-server sleep 3600) &
		echo \$\$ \$! > $cfg/pids
		wait'" </dev/null >/dev/null 2>&1 &
	for _ in $(seq 500); do [ -s "$cfg/pids" ] && break; sleep 0.01; done
	cat "$cfg/pids"; rm -f "$cfg/pids"
}
# lived SERVER T0: how long SERVER lived after T0 (at most 60 s).
lived() {
	for _ in $(seq 1200); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
	if kill -0 "$1" 2>/dev/null; then echo "ALIVE 60 s after"; kill -9 "$1"; else echo "gone $(echo "$(date +%s.%N) - $2" | bc | cut -c1-5) s after"; fi
}
if [ "$CASE" = flood ]; then
	ulimit -n "$(ulimit -Hn)"
	prlimit --nofile=4096:4096 "$BIN" watch --policy "$W/policy.toml" --lock-file "$W/reaper.lock" --journal off --backstop 1m --metrics-listen 127.0.0.1:9479 >"$W/watch.out" 2>"$W/watch.err" &
	WP=$!
	sleep 2
	read -r BC BS < <(start $B "$W/b" 1)
	sleep 61 # the first backstop finds the config dir B's session names
	setpriv --reuid=$A --regid=$A --clear-groups /usr/bin/python3 - 127.0.0.1 9479 4200 >"$W/flood.out" 2>&1 <<'PY' &
import socket, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
held = []
for i in range(n):
    try:
        s = socket.create_connection((host, port), timeout=5)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n")
        held.append(s)
    except OSError:
        break
print("A holds", len(held), "connections", flush=True)
time.sleep(60)
PY
	for _ in $(seq 600); do grep -q "^A holds" "$W/flood.out" 2>/dev/null && break; sleep 0.1; done
	cat "$W/flood.out"
	/usr/bin/python3 - <<'PY'
import time, urllib.request
for path in ("/healthz", "/metrics"):
    t = time.time()
    try:
        r = urllib.request.urlopen("http://127.0.0.1:9479" + path, timeout=10)
        print("root's GET %s: %d, %d bytes, %.3f s" % (path, r.status, len(r.read()), time.time() - t))
    except Exception as e:
        print("root's GET %s: no answer (%s) after %.1f s" % (path, e, time.time() - t))
PY
	echo "the watch: $(ls /proc/$WP/fd | wc -l) descriptors, $(awk '/VmRSS/{print $2" "$3}' /proc/$WP/status) RSS"
	kill -9 "$BC"; k=$(date +%s.%N)
	echo "B's orphaned server $(lived "$BS" "$k") B's claude was SIGKILLed"
	echo "'too many open files' in the watch's log: $(grep -c 'too many open files' "$W/watch.err")"
else
	"$BIN" watch --policy "$W/policy.toml" --lock-file "$W/reaper.lock" --journal off --backstop 1m >"$W/watch.out" 2>&1 &
	sleep 2
	for t in $(seq "$TRIALS"); do
		read -r AC AS < <(start $A "$W/a" $((t * 2)))
		read -r BC BS < <(start $B "$W/b" $((t * 2 + 1)))
		sleep 1.5 # their session files' pass: both claudes watched
		kill -9 "$AC"; sleep 1.2; kill -9 "$BC"; k=$(date +%s.%N)
		echo "trial $t: B's orphaned server $(lived "$BS" "$k") B's claude, 1.2 s after A's"
		kill -9 "$AS" 2>/dev/null
		[ "$t" = "$TRIALS" ] || sleep 31 # each user's budget of hints back
	done
fi
kill -9 -1
INNER
)
echo "attack-watch $case: $("$BIN" version 2>/dev/null | head -1); $(nproc) cores, $(date -u +%F)"
unshare --pid --fork --mount-proc bash -c "$inner" inner "$work" "$BIN" "$case" "$TRIALS" 2>&1 | grep -v -e 'Killed' -e '^\s' || true
