#!/usr/bin/env node
// `harness` from the npm package: finds the binary in the platform package
// npm installed beside this one (an optional dependency per platform) and
// runs it with this process's arguments, standard streams and environment.
// Signals sent to this process are passed on; its exit code (or the signal
// that ended it) is the binary's.
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');

// process.platform and process.arch -> the package holding the binary.
const PACKAGES = {
  'linux x64': 'coding-harness-linux-x64',
};

function binaryPath() {
  const key = `${process.platform} ${process.arch}`;
  const name = PACKAGES[key];
  if (!name) {
    fail(`coding-harness has no binary for ${key}; the platforms built are: ` +
      `${Object.keys(PACKAGES).join(', ')}. Install from source with ` +
      '`cargo install coding-harness` instead.');
  }
  try {
    return path.join(path.dirname(require.resolve(`${name}/package.json`)), 'bin', 'harness');
  } catch (err) {
    fail(`the package ${name}, which holds the harness binary for ${key}, is not ` +
      'installed beside coding-harness. It is an optional dependency: install ' +
      'without --no-optional / --omit=optional, or install it by name.');
  }
}

function fail(message) {
  process.stderr.write(`harness: ${message}\n`);
  process.exit(2);
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: 'inherit' });
const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
for (const signal of forwarded) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on('error', (err) => fail(`could not start ${child.spawnfile}: ${err.message}`));
child.on('exit', (code, signal) => {
  if (signal) {
    for (const s of forwarded) process.removeAllListeners(s);
    process.kill(process.pid, signal);
  } else {
    process.exit(code);
  }
});
