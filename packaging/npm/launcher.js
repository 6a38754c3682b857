#!/usr/bin/env node
// reaper's launcher, installed as `reaper` by npm: it runs the prebuilt
// binary of this platform, from the package npm installed beside this one
// as an optional dependency (one per OS and CPU; npm installs the one that
// fits), with the same arguments, terminal and exit status. Signals sent
// to the launcher alone are passed on; the terminal's reach both.
'use strict';
const { spawn } = require('child_process');
const path = require('path');

const pkg = `@orphanreaper/reaper-${process.platform}-${process.arch}`;
let bin;
try {
  bin = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), 'bin', 'reaper');
} catch {
  console.error(`reaper: no prebuilt binary for ${process.platform}-${process.arch}: ${pkg} is not installed ` +
    '(npm skips optional dependencies with --omit=optional or --no-optional; reaper is built for linux and darwin, x64 and arm64)');
  process.exit(1);
}
const child = spawn(bin, process.argv.slice(2), { stdio: 'inherit' });
for (const sig of ['SIGTERM', 'SIGHUP', 'SIGUSR1', 'SIGUSR2']) {
  process.on(sig, () => child.kill(sig));
}
// The terminal sends SIGINT and SIGQUIT to the whole foreground group:
// the binary has them already; the launcher waits for it.
process.on('SIGINT', () => {});
process.on('SIGQUIT', () => {});
child.on('error', (err) => {
  console.error(`reaper: ${bin}: ${err.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  process.exit(signal ? 128 + (require('os').constants.signals[signal] || 0) : code);
});
