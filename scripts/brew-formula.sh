#!/usr/bin/env bash
# brew-formula.sh — the Homebrew formula of a build, from its archives'
# checksums (SHA256SUMS in RELEASE_DIR): the four archives, what each
# installs, a service stanza for `brew services` that keeps `reaper watch`
# alive for the user, a head build from main, and a caveat: the embedded
# policy only reports until `reaper init` (or the user) writes one. A formula, not a cask: Homebrew's
# services are a formula's (a cask has none), and goreleaser's formula
# generator is deprecated, so this script writes it. Printed on stdout.
#
# usage: scripts/brew-formula.sh VERSION RELEASE_DIR
set -euo pipefail
version=$1 rel=$2
base="https://github.com/orphanreaper/reaper/releases/download/v$version"
sum() { awk -v f="reaper_${version}_$1.tar.gz" '$2 == f { print $1 }' "$rel/SHA256SUMS"; }
for t in darwin_amd64 darwin_arm64 linux_amd64 linux_arm64; do
	[ -n "$(sum "$t")" ] || { echo "brew-formula: no checksum for reaper_${version}_$t.tar.gz in $rel/SHA256SUMS" >&2; exit 1; }
done
cat <<RUBY
# typed: false
# frozen_string_literal: true

# Written by scripts/brew-formula.sh for reaper $version.
class Reaper < Formula
  desc "Find and remove the process trees AI-agent clients leave behind"
  homepage "https://github.com/orphanreaper/reaper"
  version "$version"
  license "Apache-2.0"

  on_macos do
    on_intel do
      url "$base/reaper_${version}_darwin_amd64.tar.gz"
      sha256 "$(sum darwin_amd64)"
    end
    on_arm do
      url "$base/reaper_${version}_darwin_arm64.tar.gz"
      sha256 "$(sum darwin_arm64)"
    end
  end

  on_linux do
    on_intel do
      url "$base/reaper_${version}_linux_amd64.tar.gz"
      sha256 "$(sum linux_amd64)"
    end
    on_arm do
      url "$base/reaper_${version}_linux_arm64.tar.gz"
      sha256 "$(sum linux_arm64)"
    end
  end

  # brew install --HEAD orphanreaper/tap/reaper: built from main, before
  # (or between) releases.
  head do
    url "https://github.com/orphanreaper/reaper.git", branch: "main"
    depends_on "go" => :build
  end

  def install
    if build.head?
      ENV["CGO_ENABLED"] = "0"
      system "go", "build", *std_go_args(ldflags: "-s -w"), "./cmd/reaper"
      generate_completions_from_executable(bin/"reaper", "completion")
      pkgshare.install "packaging/policy.example.toml", "packaging/launchd", *Dir["audit/*.schema.json"]
      return
    end
    bin.install "reaper"
    man1.install Dir["man/man1/*"]
    man5.install Dir["man/man5/*"]
    bash_completion.install "completions/reaper.bash" => "reaper"
    zsh_completion.install "completions/_reaper"
    fish_completion.install "completions/reaper.fish"
    pkgshare.install "packaging/policy.example.toml", "packaging/launchd", *Dir["audit/*.schema.json"]
  end

  # brew services start reaper: reaper watch for this user, kept alive;
  # its audit log where 'reaper history' reads a user's
  # (~/Library/Logs/reaper/audit.jsonl on macOS).
  service do
    run [opt_bin/"reaper", "watch", "--quiet", "--notify"]
    keep_alive true
    log_path var/"log/reaper.log"
    error_log_path var/"log/reaper.log"
    process_type :background
  end

  def caveats
    <<~EOS
      Until it has a policy, reaper only reports. To make it act, run
        reaper init
      which shows what the example policy would do on this machine first,
      then writes it to ~/.config/reaper/policy.toml and sets up the hooks.
      'brew services start reaper' keeps reaper watch running for you; its
      log is #{var}/log/reaper.log.
    EOS
  end

  test do
    assert_match version.to_s, shell_output("#{bin}/reaper --version")
    system bin/"reaper", "policy", "check", pkgshare/"policy.example.toml"
  end
end
RUBY
