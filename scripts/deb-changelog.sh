#!/bin/sh
# deb-changelog.sh VERSION — the Debian changelog (deb-changelog(5)) of a
# build, on stdout: one entry for VERSION-1 listing the commits since the
# last tag (at most 50), dated by HEAD's commit. The packages ship it
# gzipped as /usr/share/doc/reaper/changelog.Debian.gz; the release notes
# of a tagged release are the same commits (goreleaser's changelog).
set -eu
version=$1
since=$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD^ 2>/dev/null || true)
range=${since:+$since..}HEAD
echo "reaper ($version-1) unstable; urgency=medium"
echo
# Each commit's subject, wrapped at 78 columns as deb-changelog(5) wants.
git log --no-merges --format='%s' -n 50 "$range" | while IFS= read -r subject; do
	printf '%s\n' "$subject" | fold -s -w 74 | sed '1s/^/  * /; 2,$s/^/    /; s/ *$//'
done
echo
printf ' -- reaper developers <reaper@orphanreaper.invalid>  %s\n' "$(git log -1 --date=rfc2822 --format=%cd HEAD)"
