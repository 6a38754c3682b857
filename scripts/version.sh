#!/bin/sh
# version.sh [REF] — the version a build of REF (default HEAD) carries, in a
# form dpkg and rpm both sort in commit order and that starts with a digit
# (a bare hash does neither: an older build would install as an upgrade):
#   on a tag vX.Y.Z                 X.Y.Z
#   N commits after it              X.Y.Z+gitN.HASH            (after X.Y.Z)
#   no tag yet                      0.0.0~gitYYYYMMDDHHMMSS.N.HASH (the
#                                   commit's time in UTC, then how many
#                                   commits lead to it: later commits sort
#                                   later, two in one second too, and all
#                                   sort before 0.0.0, a first tag)
#   HEAD with uncommitted changes   the above, then .dirty
set -eu
ref=${1:-HEAD}
hash=$(git rev-parse --short=7 "$ref")
if desc=$(git describe --tags --match 'v[0-9]*' "$ref" 2>/dev/null); then
	case $desc in
	*-*-g*)
		tag=${desc%-*-g*}
		n=${desc#"$tag"-}
		n=${n%%-g*}
		v="${tag#v}+git$n.$hash"
		;;
	*) v=${desc#v} ;;
	esac
else
	when=$(TZ=UTC0 git log -1 --date=format-local:%Y%m%d%H%M%S --format=%cd "$ref")
	v="0.0.0~git$when.$(git rev-list --count "$ref").$hash"
fi
if [ "$ref" = HEAD ] && ! git diff --quiet HEAD -- 2>/dev/null; then
	v="$v.dirty"
fi
echo "$v"
