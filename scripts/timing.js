// @ts-check
/**
 * The report of a timed step (scripts/timed.js, scripts/together.js): prints `⏱ <label>: <seconds> s` and, when
 * DPI_TIMINGS names a file, appends `<label>\t<seconds>` to it (.ci/run prints the table at its end).
 */
const { appendFileSync } = require('node:fs');

/** Reports a step that started at `started` (ms) and ended with exit `status`. */
function reportTime(label, started, status) {
  const seconds = Math.round((Date.now() - started) / 1000);
  console.log(`⏱ ${label}: ${seconds} s${status === 0 ? '' : ` (exit ${status})`}`);
  if (process.env.DPI_TIMINGS) appendFileSync(process.env.DPI_TIMINGS, `${label}\t${seconds}${status === 0 ? '' : '\tfailed'}\n`);
}

module.exports = { reportTime };
