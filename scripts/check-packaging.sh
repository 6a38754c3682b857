#!/usr/bin/env bash
# check-packaging.sh — build the packages and check everything they ship.
#   1. make packages: goreleaser's snapshot (linux and darwin archives,
#      windows zips, SHA256SUMS, .deb and .rpm, the Homebrew formula, the
#      Scoop manifest); the checksums verify, the formula has its service
#      block, the manifest names each zip's checksum, the packages' contents are
#      listed, and lintian passes the .deb (warnings fail; each override in
#      .goreleaser.yaml says why);
#   1b. every archive holds the files docs/install.md copies from it; the npm
#      packages made from them (scripts/npm-pack.sh) install offline and run;
#   2. install the .deb into a scratch root (dpkg -x) and run the binary from
#      there: version, a scan of this machine, the shipped example policy;
#   3. systemd-analyze verify every unit; it exits 0 on unknown keys, so ANY
#      output fails the check. System units are verified inside the scratch
#      root (with systemd's own units copied in); user units (systemd 252
#      can't combine --user and --root) as copies whose ExecStart= names the
#      scratch root's binary;
#   4. systemd-analyze security --offline=true on the system services (reaper
#      and reaper-watch), failing
#      above an exposure of 2.5 (it scores 2.4: "OK"; 2.1 before CAP_SETUID and
#      CAP_SETGID for the reader children, 1.9 before the cgroup
#      hierarchy was made writable for the kill path). The user service is not
#      scored: a user manager can't apply most sandboxing;
#   5. every launchd plist parses, with the keys and types launchd wants;
#   6. promtool check metrics on the textfile reaper writes; promtool check
#      and test rules on the shipped alerting rules; every query of the
#      Grafana dashboard parses (as a recording rule promtool checks).
#   7. logrotate --debug reads the shipped rotation of the audit log;
#   8. the .deb's maintainer scripts (enable and start the watch on install,
#      restart it on upgrade, stop it on removal) parse, its copyright is
#      there, and scripts/version.sh sorts this commit after the last.
# Needs: dpkg, lintian, rpm2cpio + cpio, systemd-analyze, python3, promtool, logrotate, groff, go, make, git.
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "check-packaging: $*" >&2; exit 1; }

echo "== packages (goreleaser snapshot)"
rm -rf dist
grlog=$(mktemp)
make -s packages VERSION="${VERSION:-0.0.0+ci}" >"$grlog" 2>&1 || { cat "$grlog"; fail "make packages failed"; }
grep -E 'release succeeded|DEPRECATED' "$grlog" | sed 's/^ *//'
! grep -q DEPRECATED "$grlog" || fail "goreleaser warns of a deprecated setting (above)"
rm -f "$grlog"
rel=dist/release
(cd "$rel" && sha256sum -c SHA256SUMS) || fail "SHA256SUMS does not match the archives"
for target in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64; do
	ls "$rel"/reaper_*_"$target".tar.gz >/dev/null || fail "no $target archive"
done
tar -tzf "$rel"/reaper_*_darwin_arm64.tar.gz | grep -x 'reaper' >/dev/null || fail "the darwin archive has no binary"
for target in windows_amd64 windows_arm64; do
	unzip -l "$rel"/reaper_*_"$target".zip | grep ' reaper\.exe$' >/dev/null || fail "no $target zip with reaper.exe"
done
formula=$rel/homebrew/Formula/reaper.rb
grep -q 'service do' "$formula" && grep -q 'keep_alive true' "$formula" && grep -q '"reaper", "watch"' "$formula" || fail "the Homebrew formula has no service block that keeps reaper watch alive"
for t in darwin_amd64 darwin_arm64 linux_amd64 linux_arm64; do
	f=$(ls "$rel"/reaper_*_"$t".tar.gz)
	grep -q "sha256 \"$(sha256sum "$f" | cut -d' ' -f1)\"" "$formula" || fail "the formula's checksum of $(basename "$f") is not the archive's"
done
if command -v ruby >/dev/null; then ruby -c "$formula" >/dev/null || fail "the formula is not valid Ruby"; fi
# The Scoop manifest (scripts/scoop-manifest.sh): JSON, each architecture's
# zip with its checksum, reaper.exe as its bin.
manifest=$rel/scoop/reaper.json
python3 - "$manifest" "$rel" <<'PY' || fail "the Scoop manifest does not name the zips with their checksums"
import glob, hashlib, json, os, sys
m = json.load(open(sys.argv[1]))
assert m["bin"] == "reaper.exe", m["bin"]
for arch, target in (("64bit", "windows_amd64"), ("arm64", "windows_arm64")):
    a = m["architecture"][arch]
    (zip_,) = glob.glob(os.path.join(sys.argv[2], "reaper_*_%s.zip" % target))
    assert a["url"].endswith("/" + os.path.basename(zip_)), (a["url"], zip_)
    assert a["hash"] == hashlib.sha256(open(zip_, "rb").read()).hexdigest(), arch
PY
deb=$(ls "$rel"/reaper_*_amd64.deb)
rpm=$(ls "$rel"/reaper-*.x86_64.rpm)
echo "-- $deb"; dpkg-deb -c "$deb" | awk '{ print $1, $6 }'
echo "-- lintian"
lintian --fail-on warning,error --info "$deb" || fail "lintian: see above"
echo "-- $rpm"
# rpm2cpio (4.18) exits 1 on nfpm's RPMs yet writes the whole payload: the
# listing is what is checked.
list=$( { rpm2cpio "$rpm" || true; } | cpio -t --quiet)
echo "$list"
grep -qx '/usr/bin/reaper' <<<"$list" || fail "the rpm does not hold /usr/bin/reaper"

echo "== maintainer scripts, copyright, and a version that sorts"
ctrl=$(mktemp -d)
dpkg-deb -e "$deb" "$ctrl"
for script in postinst prerm postrm; do
	[ -x "$ctrl/$script" ] || fail "the .deb has no executable $script"
	sh -n "$ctrl/$script" || fail "$script: syntax"
done
grep -q 'enable reaper-watch.service' "$ctrl/postinst" || fail "postinst does not enable the watch"
grep -q ' enable reaper.timer' "$ctrl/postinst" && fail "postinst enables the timer (the watch is the default)"
rm -rf "$ctrl"
debfiles=$(dpkg-deb -c "$deb")
grep -q ' ./usr/share/doc/reaper/copyright$' <<<"$debfiles" || fail "the .deb has no copyright file"
grep -q ' ./usr/share/doc/reaper/prometheus/reaper-alerts.yml$' <<<"$debfiles" || fail "the .deb has no alerting rules"
grep -q ' ./usr/share/doc/reaper/grafana/reaper-dashboard.json$' <<<"$debfiles" || fail "the .deb has no dashboard"
grep -q ' ./usr/share/doc/reaper/kubernetes/reaper.yaml$' <<<"$debfiles" || fail "the .deb has no Kubernetes example"
# Each build's version must sort after the one before it, in dpkg's order
# (and so rpm's: the same ~ and + rules): a hash alone does not.
if git rev-parse -q --verify HEAD~1 >/dev/null; then
	new=$(scripts/version.sh HEAD) old=$(scripts/version.sh HEAD~1)
	dpkg --compare-versions "$new" gt "$old" || fail "version $new does not sort after the previous commit's $old"
	echo "version $new sorts after $old"
fi

echo "== the archives hold what docs/install.md copies from them"
# Every packaging/… path the "from the archive" section names, in every
# Linux and darwin archive (the plists are the darwin route's).
want=$(sed -n '/^## Any Linux, from the archive/,/^## /p' docs/install.md | grep -oE 'packaging/[A-Za-z0-9_./-]+' | sort -u)
[ -n "$want" ] || fail "docs/install.md names no file to copy from the archive"
for archive in "$rel"/reaper_*_linux_*.tar.gz; do
	listing=$(tar -tzf "$archive")
	for f in $want reaper; do
		grep -qx "$f" <<<"$listing" || fail "$(basename "$archive") has no $f, which docs/install.md copies"
	done
done
for archive in "$rel"/reaper_*_darwin_*.tar.gz; do
	listing=$(tar -tzf "$archive")
	for f in packaging/launchd/dev.orphanreaper.reaper-watch.plist packaging/launchd/dev.orphanreaper.reaper-watch.agent.plist reaper; do
		grep -qx "$f" <<<"$listing" || fail "$(basename "$archive") has no $f"
	done
done
echo "every archive holds $(wc -w <<<"$want") files install.md copies, and the binary"

echo "== npm: the packages made from the archives, installed offline"
# scripts/npm-pack.sh: the launcher package and one per platform; npm
# installs them from the tarballs, offline, into a scratch project and a
# scratch global prefix, and the launcher runs the binary: its version,
# its commit, and an exit status passed through.
npmout=$(mktemp -d)
scripts/npm-pack.sh "${VERSION:-0.0.0+ci}" "$rel" "$npmout" >/dev/null
# The Windows packages hold the zips' reaper.exe, byte for byte (the
# launcher's choice of it is TestLauncherPicksItsPlatform's).
for t in x64:amd64 arm64:arm64; do
	IFS=: read -r cpu goarch <<<"$t"
	tgz=$(ls "$npmout"/orphanreaper-reaper-win32-"$cpu"-*.tgz)
	[ "$(tar -xOzf "$tgz" package/bin/reaper.exe | sha256sum)" = "$(unzip -p "$rel"/reaper_*_windows_"$goarch".zip reaper.exe | sha256sum)" ] ||
		fail "$(basename "$tgz") does not hold the windows_$goarch zip's reaper.exe as bin/reaper.exe"
done
arch=$(node -p process.arch)
main_tgz=$(ls "$npmout"/orphanreaper-reaper-[0-9]*.tgz) plat_tgz=$(ls "$npmout"/orphanreaper-reaper-linux-"$arch"-*.tgz)
proj=$(mktemp -d)
echo '{"name": "scratch", "version": "1.0.0", "private": true}' >"$proj/package.json"
(cd "$proj" && npm install --offline --no-audit --no-fund --silent "$main_tgz" "$plat_tgz") || fail "npm install of the tarballs failed"
(cd "$proj" && npx --offline reaper version) | head -1
prefix=$(mktemp -d)
npm install --global --prefix "$prefix" --offline --no-audit --no-fund --silent "$main_tgz" "$plat_tgz" || fail "npm install --global of the tarballs failed"
"$prefix/bin/reaper" version -o json | grep '"version": "'"${VERSION:-0.0.0+ci}"'"' >/dev/null || fail "the npm-installed reaper does not print its version"
if head=$(git rev-parse HEAD 2>/dev/null); then
	"$prefix/bin/reaper" version -o json | grep "\"commit\": \"$head\"" >/dev/null || fail "the npm-installed reaper does not name its commit"
fi
code=0; "$prefix/bin/reaper" policy check /nonexistent/policy.toml >/dev/null 2>&1 || code=$?
[ "$code" = 66 ] || fail "the npm launcher passed exit status $code on, want 66"
echo "npm: $(ls "$npmout" | wc -l) tarballs, the win32 ones with the zips' reaper.exe; installed offline, locally and globally; version, commit and exit status through the launcher"
rm -rf "$npmout" "$proj" "$prefix"

echo "== the .deb in a scratch root"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg -x "$deb" "$root"
"$root/usr/bin/reaper" version
if head=$(git rev-parse HEAD 2>/dev/null); then
	"$root/usr/bin/reaper" version -o json | grep "\"commit\": \"$head\"" >/dev/null || fail "the packaged binary does not name its commit $head"
fi
XDG_CONFIG_HOME="$root/etc" "$root/usr/bin/reaper" scan --policy "$root/usr/share/doc/reaper/policy.example.toml" >/dev/null \
	|| fail "the packaged binary's scan failed"
"$root/usr/bin/reaper" policy check "$root/usr/share/doc/reaper/policy.example.toml"
for page in reaper reaper-scan reaper-reap reaper-watch reaper-run reaper-ledger reaper-policy reaper-doctor reaper-explain reaper-history; do
	[ -s "$root/usr/share/man/man1/$page.1.gz" ] || fail "man page $page.1.gz missing"
done
zcat "$root/usr/share/man/man1/reaper.1.gz" | grep '^\.SH FILES' >/dev/null || fail "reaper(1) has no FILES section"
# A flag whose default depends on the run names its value, never a zero.
if zcat "$root"/usr/share/man/man1/*.1.gz | grep -E '^\\fB--(timeout|lock-file)\\fP=(0s|"")$'; then
	fail "a man page shows a run-dependent default as a zero value"
fi
[ -s "$root/usr/share/bash-completion/completions/reaper" ] || fail "bash completion missing"
[ -s "$root/usr/share/man/man5/reaper.toml.5.gz" ] || fail "man page reaper.toml.5.gz missing"
out=$(zcat "$root/usr/share/man/man5/reaper.toml.5.gz" | groff -man -ww -z 2>&1) || true
[ -z "$out" ] || fail "reaper.toml(5): groff warns: $out"
for page in "$root"/usr/share/man/man1/*.1.gz; do
	out=$(zcat "$page" | groff -man -ww -z 2>&1) || true
	[ -z "$out" ] || fail "$(basename "$page"): groff warns: $out"
	! zcat "$page" | grep '\[=false\]' >/dev/null || fail "$(basename "$page"): a switch shows [=false]"
done
zcat "$root/usr/share/man/man1/reaper-reap.1.gz" | grep '^\.SH EXIT STATUS' >/dev/null || fail "reaper-reap(1) has no EXIT STATUS section"

echo "== systemd-analyze verify (any output fails)"
cp -rn /usr/lib/systemd/system/. "$root/usr/lib/systemd/system/"
# reaper-watch.service reloads with /bin/kill (procps, on every Debian host);
# the scratch root holds only the package, so the host's is copied in.
mkdir -p "$root/bin" && cp /bin/kill "$root/bin/kill"
out=$(MANPATH="$root/usr/share/man" systemd-analyze verify --root="$root" \
	"$root/usr/lib/systemd/system/reaper.service" "$root/usr/lib/systemd/system/reaper.timer" \
	"$root/usr/lib/systemd/system/reaper-watch.service" 2>&1) || true
[ -z "$out" ] || fail "system units: $out"
user=$(mktemp -d)
for f in "$root"/usr/lib/systemd/user/reaper*; do
	sed "s#/usr/bin/reaper#$root/usr/bin/reaper#" "$f" >"$user/$(basename "$f")"
done
mkdir -p "$user/xdg" && chmod 700 "$user/xdg"
out=$(XDG_RUNTIME_DIR="$user/xdg" MANPATH="$root/usr/share/man" systemd-analyze verify --user \
	"$user/reaper.service" "$user/reaper.timer" "$user/reaper-watch.service" 2>&1) || true
rm -rf "$user"
[ -z "$out" ] || fail "user units: $out"
echo "units verified: no output"

echo "== systemd-analyze security --offline=true (threshold 2.5: --threshold takes exposure x10)"
for unit in reaper.service reaper-watch.service; do
	systemd-analyze security --offline=true --threshold=25 "$root/usr/lib/systemd/system/$unit" | tail -1
done

echo "== logrotate: the audit log's rotation, as logrotate reads it"
[ -s "$root/etc/logrotate.d/reaper" ] || fail "the .deb does not ship /etc/logrotate.d/reaper"
lr=$(mktemp -d)
mkdir -p "$lr/log"
: >"$lr/log/audit.jsonl"
sed "s#/var/log/reaper/#$lr/log/#; s#create 0600 root root#create 0600#" "$root/etc/logrotate.d/reaper" >"$lr/reaper"
out=$(logrotate --debug --state "$lr/state" "$lr/reaper" 2>&1) || fail "logrotate: $out"
grep -q "error" <<<"$out" && fail "logrotate: $out"
grep -q "considering log $lr/log/audit.jsonl" <<<"$out" || fail "logrotate did not consider the audit log: $out"
rm -rf "$lr"
echo "logrotate: ok"

echo "== launchd plists"
python3 - packaging/launchd/*.plist <<'PY'
import plistlib, sys
common = {"Label": str, "ProgramArguments": list, "RunAtLoad": bool,
          "ProcessType": str, "LowPriorityIO": bool, "Nice": int}
optional = {"ExitTimeOut": int, "StandardOutPath": str, "StandardErrorPath": str}
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        p = plistlib.load(f)
    # A reap every StartInterval, or a watch kept alive.
    command = p.get("ProgramArguments", [None, None])[1]
    assert command in ("reap", "watch"), f"{path}: runs {command}, want reap or watch"
    want = dict(common, **({"StartInterval": int} if command == "reap" else {"KeepAlive": bool}))
    for key, typ in want.items():
        assert key in p, f"{path}: {key} missing"
        assert type(p[key]) is typ, f"{path}: {key} is {type(p[key]).__name__}, want {typ.__name__}"
    for key in p:
        assert key in want or key in optional, f"{path}: unexpected key {key}"
        if key in optional:
            assert type(p[key]) is optional[key], f"{path}: {key} has the wrong type"
    args = p["ProgramArguments"]
    assert all(isinstance(a, str) for a in args) and args[0].startswith("/"), f"{path}: ProgramArguments {args}"
    if command == "reap":
        assert p["StartInterval"] >= 10, f"{path}: StartInterval below launchd's 10 s throttle"
    else:
        assert p["KeepAlive"] is True and p.get("ExitTimeOut", 20) >= 60, f"{path}: a watch is kept alive and given time to finish a pass"
    assert p["ProcessType"] in ("Background", "Standard", "Adaptive", "Interactive"), f"{path}: ProcessType"
    for key in ("StandardOutPath", "StandardErrorPath"):
        assert key not in p or p[key].startswith("/"), f"{path}: {key} must be absolute"
    print(f"{path}: ok ({p['Label']}, " + (f"every {p['StartInterval']} s)" if command == "reap" else "kept alive)"))
PY

echo "== promtool check metrics"
metrics=$(mktemp)
"$root/usr/bin/reaper" scan --proc testdata/proc --policy testdata/policy/fixture.toml --metrics "$metrics" >/dev/null
promtool check metrics <"$metrics"
rm -f "$metrics"
echo "metrics: ok"

echo "== promtool: the alerting rules, their tests, the dashboard's queries"
promtool check rules packaging/prometheus/reaper-alerts.yml
(cd packaging/prometheus && promtool test rules reaper-alerts_test.yml)
# Every query of the Grafana dashboard, as a recording rule promtool parses
# ($instance as the regex "All" gives).
dashrules=$(mktemp --suffix .yml)
python3 - packaging/grafana/reaper-dashboard.json >"$dashrules" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exprs = [t["expr"] for p in d["panels"] for t in p["targets"]]
assert exprs, "the dashboard has no queries"
print("groups:\n  - name: dashboard\n    rules:")
for i, e in enumerate(exprs):
    print(f"      - record: dashboard_query_{i}\n        expr: {json.dumps(e.replace('$instance', '.*'))}")
PY
promtool check rules "$dashrules"
rm -f "$dashrules"
