#!/usr/bin/env bash
# wine-setup.sh — a Wine prefix in which Go's windows/amd64 programs and
# test binaries run on this Linux machine (docs/windows.md). Prints the
# prefix's path; the wine64 to call is /usr/lib/wine/wine64.
#
# Go 1.22+ loads bcryptprimitives.dll from system32 for ProcessPrng, which
# wine 8 does not have: the prefix gets a forwarder, ProcessPrng =
# advapi32.SystemFunction036 (RtlGenRandom), linked from a .def file with
# mingw's binutils alone. The prefix is made once and cached
# (${XDG_CACHE_HOME:-~/.cache}/reaper/wine-<version>); wineserver and the
# prefix's services are left running (-p), so that a start costs well
# under a second.
#
# usage: scripts/wine-setup.sh [--install]   (--install: apt-get the packages first, as root)
set -euo pipefail

wine=/usr/lib/wine/wine64
if [ "${1:-}" = --install ] && { [ ! -x "$wine" ] || ! command -v x86_64-w64-mingw32-ld >/dev/null; }; then
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wine64 binutils-mingw-w64-x86-64 >&2
fi
[ -x "$wine" ] || { echo "wine-setup: no $wine (apt-get install wine64, or --install)" >&2; exit 2; }
command -v x86_64-w64-mingw32-ld >/dev/null || { echo "wine-setup: no mingw ld (apt-get install binutils-mingw-w64-x86-64)" >&2; exit 2; }

version=$("$wine" --version 2>/dev/null | awk '{print $1; exit}')
prefix=${XDG_CACHE_HOME:-$HOME/.cache}/reaper/$version
export WINEPREFIX=$prefix WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY
dll=$prefix/drive_c/windows/system32/bcryptprimitives.dll
if [ ! -f "$dll" ]; then
	mkdir -p "$(dirname "$prefix")"
	"$wine" wineboot --init >/dev/null 2>&1
	/usr/lib/wine/wineserver -w
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	printf 'LIBRARY bcryptprimitives.dll\nEXPORTS\n    ProcessPrng = advapi32.SystemFunction036\n' >"$work/bcp.def"
	: >"$work/empty.s"
	x86_64-w64-mingw32-as -o "$work/empty.o" "$work/empty.s"
	x86_64-w64-mingw32-dlltool -d "$work/bcp.def" -e "$work/exports.o"
	x86_64-w64-mingw32-ld --dll -e 0 -o "$dll.tmp" "$work/empty.o" "$work/exports.o" -L/usr/x86_64-w64-mingw32/lib -ladvapi32 2>/dev/null ||
		x86_64-w64-mingw32-ld --dll -e 0 -o "$dll.tmp" "$work/empty.o" "$work/exports.o"
	mv "$dll.tmp" "$dll"
fi
/usr/lib/wine/wineserver -p >/dev/null 2>&1 || true
# The prefix's first program also starts its services (services.exe,
# winedevice.exe, rpcss.exe …), which live as long as wineserver and keep
# whatever stdout that program had: started by a test binary, they hold
# go test's pipe open and it fails a minute after the tests passed ("Test
# I/O incomplete"). Started here, they hold /dev/null.
"$wine" wineboot </dev/null >/dev/null 2>&1 || true
echo "$prefix"
