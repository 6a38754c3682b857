#!/usr/bin/env node
// reaper's launcher, installed as `reaper` by npm: it runs the prebuilt
// binary of this platform, from the package npm installed beside this one
// as an optional dependency (one per OS and CPU; npm installs the one that
// fits), with the same arguments, terminal and exit status. Signals sent
// to the launcher alone are passed on; the terminal's reach both. On
// Windows the binary is bin\reaper.exe, and nothing is passed on: a
// console's Ctrl-C and close reach every process attached to it, the
// binary too, and Node's kill there is TerminateProcess, which would end
// a reap mid-way with its tree suspended.
'use strict';
const { spawn } = require('child_process');
const path = require('path');

const windows = process.platform === 'win32';
const pkg = `@orphanreaper/reaper-${process.platform}-${process.arch}`;
let bin;
try {
  bin = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), 'bin', windows ? 'reaper.exe' : 'reaper');
} catch {
  let version = '';
  try {
    version = require(path.join(__dirname, '..', 'package.json')).version;
  } catch {}
  const at = version ? `@${version}` : '';
  const built = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64', 'win32-arm64'];
  const lines = [`reaper: no prebuilt binary: ${pkg} is not installed beside this launcher.`];
  if (!built.includes(`${process.platform}-${process.arch}`)) {
    lines.push(`  reaper is built for ${built.join(', ')}, not ${process.platform}-${process.arch}: build it from source`,
      '  (go install github.com/orphanreaper/reaper/cmd/reaper@latest, with CGO_ENABLED=0).');
  } else {
    lines.push('  Likely: the launcher was installed without it — from its tarball alone (its platform package',
      '  must be installed with it), with --omit=optional or --no-optional, or before that version was',
      '  published. Install both:',
      `    npm install -g ${pkg}${at} @orphanreaper/reaper${at}`,
      '  or, from release tarballs, both in one command:',
      `    npm install -g ./orphanreaper-reaper-${process.platform}-${process.arch}-${version || 'X.Y.Z'}.tgz ./orphanreaper-reaper-${version || 'X.Y.Z'}.tgz`);
  }
  console.error(lines.join('\n'));
  process.exit(1);
}
const child = spawn(bin, process.argv.slice(2), { stdio: 'inherit' });
if (!windows) {
  for (const sig of ['SIGTERM', 'SIGHUP', 'SIGUSR1', 'SIGUSR2']) {
    process.on(sig, () => child.kill(sig));
  }
}
// The terminal sends SIGINT and SIGQUIT to the whole foreground group (a
// console its Ctrl-C and Ctrl-Break to every process on it): the binary
// has them already; the launcher waits for it.
for (const sig of windows ? ['SIGINT', 'SIGBREAK'] : ['SIGINT', 'SIGQUIT']) {
  process.on(sig, () => {});
}
child.on('error', (err) => {
  console.error(`reaper: ${bin}: ${err.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  process.exit(signal ? 128 + (require('os').constants.signals[signal] || 0) : code);
});
