#!/usr/bin/env node
// @ts-check
/**
 * `node scripts/timed.js <label> <command> [args...]`: runs the command (inheriting stdio), then prints
 * `⏱ <label>: <seconds> s` and, when DPI_TIMINGS names a file, appends `<label>\t<seconds>` to it (.ci/run prints the
 * table at its end). Exits with the command's status. The test tiers' tasks run through it (.projenrc.ts).
 */
const { spawnSync } = require('node:child_process');
const { reportTime } = require('./timing');

const [label, command, ...args] = process.argv.slice(2);
if (!label || !command) {
  console.error('usage: node scripts/timed.js <label> <command> [args...]');
  process.exit(2);
}
const started = Date.now();
const r = spawnSync(command, args, { stdio: 'inherit' });
if (r.error) console.error(`${label}: ${command} did not start: ${r.error.message}`);
const status = r.status ?? 1;
reportTime(label, started, status);
process.exit(status);
