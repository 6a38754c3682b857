#!/usr/bin/env bash
# wine-test.sh — go test for windows/amd64, the test binaries run under
# wine (scripts/wine-setup.sh's prefix): scripts/wine-test.sh [go test
# flags and packages], e.g. scripts/wine-test.sh ./...
#
# One thing of Go's is changed for these builds alone, by go's -overlay,
# in a copy: wine 8 answers NtSetInformationFile's
# FileDispositionInformationEx (which Go's os.RemoveAll tries first) with
# STATUS_NOT_IMPLEMENTED, where a Windows without it answers
# STATUS_INVALID_INFO_CLASS and Go falls back to the older call. Unchanged,
# every t.TempDir's cleanup fails under wine ("unlinkat …: Invalid
# function"). The copy makes Go take its own fallback for wine's answers
# too; Windows itself never gives them there, so what is tested is Go's
# code as Windows runs it. If Go's file no longer has the lines this
# edits, the script says so and stops.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
prefix=$("$here/scripts/wine-setup.sh")
export WINEPREFIX=$prefix WINEDEBUG=-all
src=$(go env GOROOT)/src/internal/syscall/windows/at_windows.go
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
anchor='STATUS_NOT_SUPPORTED:     // the file system doesn'"'"'t support FILE_DISPOSITION_INFORMATION_EX or one of the flags'
grep -qF "$anchor" "$src" || { echo "wine-test: $src has no line '$anchor' (a Go release changed it): update this script" >&2; exit 1; }
awk -v anchor="$anchor" '
	index($0, anchor) {
		sub(/STATUS_NOT_SUPPORTED:/, "STATUS_NOT_SUPPORTED,")
		print
		print "\t\tNTStatus(0xC0000002), NTStatus(0xC0000010): // wine 8: STATUS_NOT_IMPLEMENTED, STATUS_INVALID_DEVICE_REQUEST"
		next
	}
	{ print }
' "$src" >"$dir/at_windows.go"
printf '{"Replace":{"%s":"%s"}}\n' "$src" "$dir/at_windows.go" >"$dir/overlay.json"
cd "$here"
# The tests that run the program itself (cmd/reaper's) build it with go,
# which wine has not: they are given reaper.exe built here (clitest.EnvBin),
# unstamped as clitest.Build builds it (TestVersionJSON wants no commit).
GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go build -buildvcs=false -overlay "$dir/overlay.json" -o "$dir/reaper.exe" ./cmd/reaper
export REAPER_TEST_BIN=$dir/reaper.exe
GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go test -overlay "$dir/overlay.json" -exec /usr/lib/wine/wine64 "$@"
