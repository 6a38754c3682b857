#!/usr/bin/env bash
# code-dups.sh: the rows of `duplicates` (read on stdin) that are the
# same code written twice — the identical pairs (no "shape" mark) but
# those whose two places both lie inside a Go import block. duplicates
# passes over import lines, but the lines of a parenthesised Go import
# block are its paths, one a line: two test files that use the same nine
# standard packages and one helper package share ten identical lines
# that are no code. A pair with either side outside an import block is
# kept.
set -euo pipefail

# inimports FILE FROM TO: lines FROM..TO of FILE all lie between an
# "import (" line and its ")".
inimports() {
	awk -v from="$2" -v to="$3" '
		/^import \($/ { inside = 1; next }
		inside && /^\)$/ { inside = 0; next }
		NR >= from && NR <= to && !inside { out = 1 }
		END { exit out ? 1 : 0 }' "$1"
}

grep -E '^D[0-9]+ ' | grep -v ' shape' | while read -r id a _ b _; do
	fa=${a%:*} ra=${a##*:} fb=${b%:*} rb=${b##*:}
	if [[ $fa == *.go && $fb == *.go ]] && inimports "$fa" "${ra%-*}" "${ra#*-}" && inimports "$fb" "${rb%-*}" "${rb#*-}"; then
		continue
	fi
	echo "$id $a ~ $b"
done
