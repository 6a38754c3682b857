# bench-lib.sh — sourced by bench-ps.sh and bench-init.sh: a scratch dir
# ($work), the process groups the script starts ($groups, each SIGKILLed
# by its group on every exit — never anything by name), and the binary
# ($BIN, built from this checkout when the script was given none).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
groups=()
teardown() {
	for g in "${groups[@]}"; do kill -KILL -- "-$g" 2>/dev/null || true; done
	rm -rf "$work"
}
trap teardown EXIT
if [ -z "$BIN" ]; then
	BIN=$work/reaper
	(cd "$here" && CGO_ENABLED=0 go build -o "$BIN" ./cmd/reaper)
fi
