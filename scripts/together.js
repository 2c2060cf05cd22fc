#!/usr/bin/env node
// @ts-check
/**
 * `node scripts/together.js "<label>=<command>" ...`: runs the commands at the same time (each through the shell),
 * prints each one's output whole when it ends (never interleaved) with `⏱ <label>: <seconds> s`, appends
 * `<label>\t<seconds>` to the file DPI_TIMINGS names (as scripts/timed.js does), and exits 1 when any failed. For steps
 * that each use one core (tsc, eslint): the build runs them side by side (.projenrc.ts).
 */
const { spawn } = require('node:child_process');
const { reportTime } = require('./timing');

const jobs = process.argv.slice(2).map((arg) => {
  const i = arg.indexOf('=');
  if (i <= 0) {
    console.error(`usage: node scripts/together.js "<label>=<command>" ... (got ${JSON.stringify(arg)})`);
    process.exit(2);
  }
  return { label: arg.slice(0, i), command: arg.slice(i + 1) };
});

const runs = jobs.map(({ label, command }) => new Promise((resolve) => {
  const started = Date.now();
  const out = [];
  const child = spawn(command, { shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d) => out.push(d));
  child.stderr.on('data', (d) => out.push(d));
  child.on('error', (e) => out.push(Buffer.from(`${label}: ${e.message}\n`)));
  child.on('close', (code) => {
    process.stdout.write(Buffer.concat(out));
    reportTime(label, started, code ?? 1);
    resolve(code === 0);
  });
}));

Promise.all(runs).then((ok) => process.exit(ok.every(Boolean) ? 0 : 1));
