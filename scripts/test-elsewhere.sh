#!/usr/bin/env bash
# test-elsewhere.sh — as root, run the README's test command where a
# newcomer or a container's CI would, and fail if it fails there:
#   1. as an ordinary user (nobody) in a copy of the checkout owned by root
#      (git refuses to read another user's repository; the fixture's uids
#      and the goldens must not depend on who runs them; root-only tests
#      skip and say so);
#   2. as root inside a private PID namespace with its own /proc, as in a
#      container (no kthreadd, the parent outside, pid 1 the test's own).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "test-elsewhere: run as root" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

echo "== as nobody, in a checkout root owns"
cp -a . "$work/reaper"                      # root-owned, modes kept
rm -rf "$work/reaper/dist"
home="$work/home"
mkdir -p "$home/tmp"
chown -R nobody "$home"
gobin=$(dirname "$(command -v go)")
# Modules from the proxy into nobody's own cache (root's is in /root, 0700).
setpriv --reuid=nobody --regid=nogroup --clear-groups \
	env -i PATH="$gobin:/usr/bin:/bin" HOME="$home" TMPDIR="$home/tmp" GOCACHE="$home/cache" \
	GOMODCACHE="$home/mod" GOTOOLCHAIN=local GOFLAGS=-mod=readonly ${GOPROXY:+GOPROXY="$GOPROXY"} ${CGO_ENABLED:+CGO_ENABLED="$CGO_ENABLED"} \
	bash -c "cd '$work/reaper' && go test -count=1 -v ./..." >"$work/nobody.log" 2>&1 && rc=0 || rc=$?
# The packages' lines and each one's closing summary of what it skipped.
grep -E '^(ok|FAIL|panic|--- FAIL|skipped [0-9]+ tests?|  [0-9]+: )' "$work/nobody.log" | grep -v 'no test files' || true
[ "$rc" = 0 ] || { grep -B60 -A2 -e '--- FAIL' "$work/nobody.log" | tail -300; echo "FAIL: the tests as nobody (exit $rc)"; exit 1; }
grep -q '^skipped [0-9]* tests' "$work/nobody.log" || { echo "FAIL: the run as nobody did not say what it skipped"; exit 1; }

echo "== as root, in a private PID namespace"
unshare --pid --fork --mount-proc go test -count=1 -v ./... >"$work/pidns.log" 2>&1 && rc=0 || rc=$?
grep -E '^(ok|FAIL|panic|--- FAIL|skipped [0-9]+ tests?|  [0-9]+: )' "$work/pidns.log" | grep -v 'no test files' || true
[ "$rc" = 0 ] || { grep -B60 -A2 -e '--- FAIL' "$work/pidns.log" | tail -300; echo "FAIL: the tests in a PID namespace (exit $rc)"; exit 1; }
echo "test-elsewhere: ok"
