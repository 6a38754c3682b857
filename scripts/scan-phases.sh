#!/usr/bin/env bash
# scan-phases.sh — where does a quiet `reaper scan` spend its time, phase
# by phase?
#
# Samples N scans with perf (perf record -g, 20 kHz, in HOME and XDG dirs
# of their own) and prints, for each phase, the share of the scans' CPU
# samples whose stack holds the phase's function (children included, so
# the shares overlap where one phase calls another):
#   runtime start      runtime.schedinit (the heap, the itabs, the modules)
#   package init       runtime.doInit1
#   command tree       main.newRootCommand (cobra's commands and flags)
#   policy             policy.Default (the embedded policy parsed)
#   discovery          gather.Begin (homes, the clients' dirs in them)
#   clients' records   gather.readDirs (each dir's files read, decoded)
#   evidence           gather.Load (ledgers and state the table leads to)
#   process table      platform.(*procReader).readAll
#   attribution        scan.scanTable
#   decision           run.(*Table).Decide
#   report             main.emit
#   regexp compiled    regexp.compile (within the phases above)
#   GC                 runtime.gcBgMarkWorker
# Needs perf (apt-get install linux-perf) and a kernel that lets it sample.
#
# usage: scripts/scan-phases.sh [-n SCANS] [-b REAPER_BINARY]
#   defaults: 100 scans, the binary built from this checkout.
set -euo pipefail
trap 'echo "scan-phases: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

N=100
BIN=""
while getopts "n:b:h" opt; do
	case $opt in
	n) N=$OPTARG ;;
	b) BIN=$OPTARG ;;
	*) sed -n '2,25p' "$0"; exit 2 ;;
	esac
done
command -v perf >/dev/null || { echo "scan-phases: needs perf (apt-get install linux-perf)" >&2; exit 2; }
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home"
if [ -z "$BIN" ]; then
	CGO_ENABLED=0 go build -o "$work/reaper" ./cmd/reaper
	BIN=$work/reaper
fi
cp "$BIN" "$work/reaper-scan" # one name to pick its samples out by
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_CACHE_HOME=$work/home/.cache \
	XDG_STATE_HOME=$work/home/.local/state XDG_DATA_HOME=$work/home/.local/share XDG_RUNTIME_DIR=$work/home/run
cat >"$work/loop.sh" <<LOOP
#!/bin/sh
i=0
while [ \$i -lt $N ]; do "$work/reaper-scan" scan >/dev/null; i=\$((i + 1)); done
LOOP
chmod +x "$work/loop.sh"
perf record -q -F 20000 -g -o "$work/perf.data" "$work/loop.sh" 2>/dev/null
perf script -i "$work/perf.data" --comm reaper-scan 2>/dev/null |
	awk '/^reaper-scan/ { if (s) print s; s = ""; next } NF { s = s ";" $2 } END { if (s) print s }' >"$work/stacks"
total=$(wc -l <"$work/stacks")
echo "$(date -u +%F), $(nproc) cores, $(uname -r), $(ls /proc | grep -c '^[0-9]') processes, uid $(id -u): $N scans, $total samples"
while IFS='|' read -r name fn; do
	n=$(grep -cF "$fn" "$work/stacks" || true)
	awk -v name="$name" -v n="$n" -v t="$total" 'BEGIN { printf "%-18s %5.1f%%\n", name, 100 * n / t }'
done <<'PHASES'
runtime start|runtime.schedinit
package init|runtime.doInit1
command tree|main.newRootCommand
policy|policy.Default
discovery|gather.Begin
clients' records|gather.readDirs
evidence|gather.Load
process table|platform.(*procReader).readAll
attribution|scan.scanTable
decision|run.(*Table).Decide
report|main.emit
regexp compiled|regexp.compile
GC|runtime.gcBgMarkWorker
PHASES
