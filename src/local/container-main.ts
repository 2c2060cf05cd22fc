/**
 * The program of a Lambda container (containers.ts): a worker thread that loads the handler bundle once, with its own
 * module state, and runs the invocations it is sent one at a time. It is plain JavaScript run with `eval` (so it works
 * the same from the sources, under jest, and from the bundles), and uses nothing but Node.js.
 *
 * Messages in: `invoke` (method, event, context, deadline, runtime, clock, anchor), `slept` (a wait on the emulator's clock ended).
 * Messages out: `result`, `log` (a line the handler logged, as written), `sleep` (a wait on the emulator's clock),
 * `warning` (a process warning, emitted by the run's process).
 */
export const CONTAINER_MAIN = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const Module = require('node:module');
const { dirname } = require('node:path');
const { format } = require('node:util');

// Process warnings (e.g. the AWS SDK's on the Node.js version) are the run's to show or replace, not the log's.
process.emitWarning = (warning, options, code) => {
  const message = typeof warning === 'string' ? warning : String((warning && warning.message) || warning);
  const type = typeof options === 'string' ? options : (options && options.type) || (warning && warning.name) || 'Warning';
  const c = typeof options === 'string' ? code : options && options.code;
  parentPort.postMessage({ kind: 'warning', message, type, code: c });
};

let requestId = '';
const localConsole = {};
for (const level of ['log', 'info', 'warn', 'error', 'debug', 'trace']) {
  localConsole[level] = (...args) => parentPort.postMessage({ kind: 'log', level, requestId, text: format(...args) });
}
// What the code writes to stdout and stderr itself reaches the log too (Lambda sends it to CloudWatch Logs), a line
// at a time.
const partial = { INFO: '', ERROR: '' };
for (const [stream, level] of [[process.stdout, 'INFO'], [process.stderr, 'ERROR']]) {
  stream.write = (chunk, encoding, done) => {
    const lines = (partial[level] + (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'))).split('\n');
    partial[level] = lines.pop();
    for (const text of lines) parentPort.postMessage({ kind: 'log', level, requestId, text });
    const callback = typeof encoding === 'function' ? encoding : done;
    if (typeof callback === 'function') callback();
    return true;
  };
}
// The end of an invocation flushes a line without its newline, under that invocation (as Lambda's log does).
function flush() {
  for (const level of ['INFO', 'ERROR']) {
    if (partial[level] !== '') parentPort.postMessage({ kind: 'log', level, requestId, text: partial[level] });
    partial[level] = '';
  }
}
// The cloud's clock of the run (cloud-clock.ts), when it is not the wall clock: Date, the timers (global, the timers
// modules, util.promisify, AbortSignal.timeout) and performance.now of everything in the container (the handler, the
// AWS SDK) pass scale times as fast from where the run's clock stands ({ scale, realAt, cloudAt }). Socket timeouts
// of node:http stay real.
let anchor = workerData.clock;
if (anchor) {
  const { promisify } = require('node:util');
  const timers = require('node:timers');
  const timersPromises = require('node:timers/promises');
  const RealDate = Date;
  const realNow = RealDate.now;
  const cloudNow = () => anchor.cloudAt + (realNow() - anchor.realAt) * anchor.scale;
  const real = (ms) => (Number(ms) || 0) / anchor.scale;
  function CloudDate(...args) {
    if (!new.target) return new RealDate(cloudNow()).toString();
    return Reflect.construct(RealDate, args.length === 0 ? [cloudNow()] : args, new.target);
  }
  Object.setPrototypeOf(CloudDate, RealDate);
  CloudDate.prototype = RealDate.prototype;
  Object.defineProperty(CloudDate, 'length', { value: 7 });
  CloudDate.now = () => Math.floor(cloudNow());
  globalThis.Date = CloudDate;
  const realSetTimeout = timers.setTimeout;
  const realSetInterval = timers.setInterval;
  const realSleep = timersPromises.setTimeout;
  const setTimeoutScaled = (fn, ms, ...args) => realSetTimeout(fn, real(ms), ...args);
  setTimeoutScaled[promisify.custom] = (ms, value, options) => realSleep(real(ms), value, options);
  const setIntervalScaled = (fn, ms, ...args) => realSetInterval(fn, real(ms), ...args);
  globalThis.setTimeout = setTimeoutScaled;
  globalThis.setInterval = setIntervalScaled;
  timers.setTimeout = setTimeoutScaled;
  timers.setInterval = setIntervalScaled;
  timersPromises.setTimeout = (ms, value, options) => realSleep(real(ms), value, options);
  const realAbortTimeout = AbortSignal.timeout.bind(AbortSignal);
  AbortSignal.timeout = (ms) => realAbortTimeout(real(ms));
  const realPerfNow = performance.now.bind(performance);
  const perfAt = realPerfNow();
  performance.now = () => perfAt + (realPerfNow() - perfAt) * anchor.scale;
}

// Between invocations Lambda freezes the environment: nothing of it runs until the next invocation thaws it.
const thaw = workerData.thaw;
function freeze() {
  Atomics.wait(thaw, 0, 0);
}

const vendor = workerData.vendor;
function vendorModule(id) {
  if (vendor.bundle) return require(vendor.bundle).vendorModule(id);
  if (vendor.paths[id]) return require(vendor.paths[id]);
  return undefined;
}

const file = workerData.file;
const m = new Module(file);
m.filename = file;
m.paths = Module._nodeModulePaths(dirname(file));
m.localConsole = localConsole;
const own = Module.prototype.require.bind(m);
m.require = (id) => {
  if (id.startsWith('@aws-sdk/')) {
    const v = vendorModule(id);
    if (v !== undefined) return v;
  }
  try {
    return own(id);
  } catch (e) {
    if (id.startsWith('@aws-sdk/') && e && e.code === 'MODULE_NOT_FOUND') {
      throw new Error(workerData.missingClient.split('\u0000').join(id));
    }
    throw e;
  }
};
m._compile(workerData.code, file);
const handler = m.exports;
parentPort.postMessage({ kind: 'ready' });

let clock;
const sleeps = new Map();
let sleepId = 0;
function sleepOnClock(ms) {
  const id = String(++sleepId);
  return new Promise((resolve, reject) => {
    sleeps.set(id, { resolve, reject });
    parentPort.postMessage({ kind: 'sleep', id, ms });
  });
}

// What the run gives changes with the run (a warm container serves later runs too): the handler's caches are
// cleared when the account, the journal, the token or the clock change, as the in-process runner does.
let environment = {};
// The runner answers for CloudFormation (DescribeStacks of the event's stack), per invocation.
let lineage;
let configured;
function configure(runtime, onClock) {
  environment = runtime.environment;
  lineage = runtime.lineage;
  clock = onClock;
  const key = JSON.stringify([runtime.account, runtime.journalEndpoint || '', runtime.token, !!onClock]);
  if (configured === key) return;
  configured = key;
  handler.configureLocalRuntime({
    readSecret: async () => runtime.token,
    callerAccountId: async () => runtime.account,
    journalEndpoint: runtime.journalEndpoint,
    roleCreatedAt: async () => undefined,
    environment: () => environment,
    describeStack: async (id) => (lineage && lineage.stackId === id ? { ParentId: lineage.parentId, RootId: lineage.rootId } : undefined),
    ...(onClock ? { sleep: sleepOnClock, now: () => Date.now() + Number(Atomics.load(clock, 0)) } : {}),
  });
}

parentPort.on('message', async (msg) => {
  if (msg.kind === 'slept') {
    const s = sleeps.get(msg.id);
    sleeps.delete(msg.id);
    if (s && msg.error) s.reject(new Error(msg.error));
    else if (s) s.resolve();
    return;
  }
  if (msg.kind !== 'invoke') return;
  Atomics.store(thaw, 0, 0);
  if (anchor && msg.anchor) anchor = msg.anchor;
  requestId = msg.context.awsRequestId;
  const deadline = msg.deadline;
  const context = {
    ...msg.context,
    // Whole milliseconds, never more than the timeout, as Lambda answers (the deadline comes from the fractional cloud clock).
    getRemainingTimeInMillis: () => Math.max(0, Math.floor(deadline) - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  try {
    configure(msg.runtime, msg.clock);
    const value = await handler[msg.method](msg.event, context);
    // Lambda returns the result as JSON.
    const result = value === undefined ? undefined : JSON.parse(JSON.stringify(value));
    flush();
    parentPort.postMessage({ kind: 'result', id: msg.id, value: result });
  } catch (e) {
    const error = e instanceof Error ? { name: e.name, message: e.message } : { message: String(e) };
    flush();
    parentPort.postMessage({ kind: 'result', id: msg.id, error });
  }
  freeze();
});
`;
