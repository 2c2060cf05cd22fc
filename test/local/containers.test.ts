/**
 * Lambda's execution environments as the local runner models them (src/local/containers.ts): module state per
 * container, one invocation at a time, warm reuse, a timeout that stops the code, the memory size as a limit, the
 * handler's log lines. The handler is a planted one whose module state and late calls are visible.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { synthTinyApp } from './apps';
import { tempDir } from './helpers';
import { ContainerInvocation, LambdaContainers, stopWarmContainers } from '../../src/local/containers';
import type { HandlerLogSink } from '../../src/local/handler';

const PLANTED = `
const { threadId } = require('node:worker_threads');
let invocations = 0;
let runtime;
exports.configureLocalRuntime = (r) => { runtime = r; };
exports.onEvent = async (event, context) => {
  invocations++;
  const p = event.ResourceProperties;
  if (p.waitMs) await new Promise((res) => setTimeout(res, p.waitMs));
  if (p.lateCallUrl) setTimeout(() => fetch(p.lateCallUrl).catch(() => undefined), p.lateCallMs);
  if (p.lateCallUrl) await new Promise((res) => setTimeout(res, p.lateCallMs + 1000));
  if (p.allocate) { const keep = []; for (;;) keep.push(new Array(1e6).fill(keep.length)); }
  if (p.log) { console.log('signing in as', p.log); process.stdout.write('straight to stdout\\n'); process.stdout.write('no newline ' + p.log); }
  if (p.warn) process.emitWarning('warned with ' + p.warn);
  if (p.backgroundUrl) setTimeout(() => fetch(p.backgroundUrl).catch(() => undefined), 50);
  if (p.sleepMs) await runtime.sleep(p.sleepMs);
  if (p.fail) throw new Error('refused: ' + p.fail);
  return {
    PhysicalResourceId: 'planted',
    Data: { threadId, invocations, account: await runtime.callerAccountId(), secret: (await runtime.readSecret('arn')).length,
      remaining: context.getRemainingTimeInMillis(), requestId: context.awsRequestId, now: runtime.now ? runtime.now() - Date.now() : 0,
      served: runtime.environment(event).DPI_BOUND_STACKS },
  };
};
`;

interface Answer {
  Data: { threadId: number; invocations: number; account: string; secret: number; remaining: number; requestId: string; now: number; served: string };
}

let tmp: { dir: string; cleanup: () => void };
let handlerFile: string;
let pool: LambdaContainers | undefined;
const lines: string[] = [];
const sink: HandlerLogSink = { secrets: ['tok-123456'], onLine: (l) => lines.push(l) };

beforeEach(() => {
  tmp = tempDir('dpi-containers-');
  handlerFile = join(tmp.dir, 'planted.js');
  writeFileSync(handlerFile, PLANTED);
  lines.length = 0;
});
afterEach(() => {
  pool?.close();
  pool = undefined;
  stopWarmContainers();
  tmp.cleanup();
});

function containers(o: Partial<ConstructorParameters<typeof LambdaContainers>[0]> = {}): LambdaContainers {
  pool = new LambdaContainers({ handlerFile, token: 'tok-123456', sink, ...o });
  return pool;
}

function invocation(props: Record<string, unknown> = {}, o: Partial<ContainerInvocation> = {}): ContainerInvocation {
  return {
    functionKey: 'Stack/OnEvent',
    functionName: 'Stack-OnEvent',
    functionArn: 'arn:aws:lambda:us-east-1:123456789012:function:Stack-OnEvent',
    timeoutMs: 5_000,
    method: 'onEvent',
    event: { RequestType: 'Create', LogicalResourceId: 'R', ResourceProperties: props },
    runtime: { account: '123456789012', environment: { DPI_BOUND_STACKS: '["Stack"]' } },
    ...o,
  };
}

test('concurrent invocations run in separate containers, each with its own module state; a warm one is reused', async () => {
  const c = containers();
  const [a, b] = await Promise.all([c.invoke(invocation({ waitMs: 200 })), c.invoke(invocation({ waitMs: 200 }))]) as Answer[];
  expect(a.Data.threadId).not.toBe(b.Data.threadId);
  // Module state is the container's: each saw one invocation.
  expect([a.Data.invocations, b.Data.invocations]).toEqual([1, 1]);
  expect(c.coldStarts).toBe(2);
  // The next invocation finds a warm container: its module state goes on.
  const d = await c.invoke(invocation()) as Answer;
  expect([a.Data.threadId, b.Data.threadId]).toContain(d.Data.threadId);
  expect(d.Data.invocations).toBe(2);
  expect(c.coldStarts).toBe(2);
  // Another function has containers of its own.
  const other = await c.invoke(invocation({}, { functionKey: 'Other/OnEvent' })) as Answer;
  expect(other.Data.invocations).toBe(1);
  expect(c.coldStarts).toBe(3);
  // The runtime the run gives: the account, the token (by length here), the environment, the context's deadline.
  expect(d.Data).toMatchObject({ account: '123456789012', secret: 'tok-123456'.length, served: '["Stack"]' });
  expect(d.Data.remaining).toBeGreaterThan(4_000);
  expect(d.Data.remaining).toBeLessThanOrEqual(5_000);
  expect(c.used).toBe(3);
  // A later run in the same process finds them warm (as Lambda keeps environments between deployments): no cold start,
  // the module goes on, the run's own token and account are what the handler sees.
  c.close();
  const later = new LambdaContainers({ handlerFile, token: 'tok-later', sink });
  const e = await later.invoke(invocation({}, { runtime: { account: '210987654321', environment: {} } })) as Answer;
  expect(later.coldStarts).toBe(0);
  expect(e.Data.invocations).toBeGreaterThan(1);
  expect(e.Data).toMatchObject({ account: '210987654321', secret: 'tok-later'.length });
  later.close();
});

describe('a timeout stops the container', () => {
  let server: Server;
  let url: string;
  let calls = 0;
  beforeEach(async () => {
    calls = 0;
    server = createServer((_, res) => {
      calls++;
      res.end('ok');
    });
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/late`;
  });
  afterEach(async () => {
    await new Promise((res) => server.close(res));
  });

  test('the code stops where it is: its later call never happens, and the next invocation is a cold start', async () => {
    const c = containers();
    await expect(c.invoke(invocation({ lateCallUrl: url, lateCallMs: 400 }, { timeoutMs: 150 }))).rejects.toThrow('Task timed out after 0.15 seconds');
    await new Promise((res) => setTimeout(res, 700));
    expect(calls).toBe(0);
    const next = await c.invoke(invocation()) as Answer;
    expect(next.Data.invocations).toBe(1);
    expect(c.coldStarts).toBe(2);
  });

  test('between invocations the container is frozen: work left running after the answer waits for the next invocation', async () => {
    const c = containers();
    await c.invoke(invocation({ backgroundUrl: url }));
    await new Promise((res) => setTimeout(res, 500));
    expect(calls).toBe(0);
    // Thawed by the next invocation, the timer that came due meanwhile runs (as in Lambda).
    await c.invoke(invocation({ waitMs: 300 }));
    expect(calls).toBe(1);
  });

  test('control: the same handler given the time makes the call (the check above can fail)', async () => {
    const c = containers();
    await c.invoke(invocation({ lateCallUrl: url, lateCallMs: 100 }, { timeoutMs: 5_000 }));
    expect(calls).toBe(1);
  });
});

test('the function\'s memory size bounds the container: a handler that outgrows it fails, the container is replaced', async () => {
  const c = containers();
  await expect(c.invoke(invocation({ allocate: true }, { memoryMb: 64, timeoutMs: 60_000 }))).rejects.toThrow(/Runtime exited with error: out of memory/);
  const next = await c.invoke(invocation()) as Answer;
  expect(next.Data.invocations).toBe(1);
}, 90_000);

test('errors, log lines and stdout reach the run as written, under the invocation\'s request ID', async () => {
  const file = join(tmp.dir, 'handler.log');
  let leaks = 0;
  const c = containers({ sink: { file, secrets: ['tok-123456'], raw: true, onSecret: () => leaks++, onLine: (l) => lines.push(l) } });
  await expect(c.invoke(invocation({ fail: 'no such identity' }))).rejects.toThrow('refused: no such identity');
  const ok = await c.invoke(invocation({ log: 'tok-123456' })) as Answer;
  await new Promise((res) => setTimeout(res, 100));
  const log = readFileSync(file, 'utf8');
  expect(log).toContain(`${ok.Data.requestId}\tLOG\tsigning in as tok-123456`);
  expect(log).toContain(`${ok.Data.requestId}\tINFO\tstraight to stdout`);
  // A write without its newline is flushed at the end of its invocation, under its request ID: its leak is seen.
  expect(log).toContain(`${ok.Data.requestId}\tINFO\tno newline tok-123456`);
  expect(leaks).toBe(2);
  // A process warning is the run's to show: one that holds the token is a leak too (shown with '***').
  const emitted = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  await c.invoke(invocation({ warn: 'tok-123456' }));
  await new Promise((res) => setTimeout(res, 100));
  expect(emitted.mock.calls.map((call) => call[0])).toContain('warned with ***');
  emitted.mockRestore();
  expect(leaks).toBe(3);
  expect(lines).toContain('signing in as ***');
});

test('with the emulator\'s clock, the handler\'s waits go to the run and its clock is ahead by what they moved', async () => {
  const offset = new BigInt64Array(new SharedArrayBuffer(8));
  const waits: number[] = [];
  const c = containers({
    clock: {
      offset,
      wait: async (ms) => {
        waits.push(ms);
        Atomics.store(offset, 0, BigInt(ms));
      },
    },
  });
  const started = Date.now();
  const answer = await c.invoke(invocation({ sleepMs: 60_000 })) as Answer;
  expect(Date.now() - started).toBeLessThan(30_000);
  expect(waits).toEqual([60_000]);
  expect(answer.Data.now).toBeGreaterThanOrEqual(59_990);
});

test('the bundled runner: a run ends with its containers warm, and they keep the process from exiting no longer', () => {
  const app = synthTinyApp(join(tmp.dir, 'cdk.out'), { subscriptionName: 'orders' });
  const runner = join(__dirname, '..', '..', 'assets', 'local', 'runner', 'index.js');
  const script = `require(${JSON.stringify(runner)}).runLocalDeploy({ app: ${JSON.stringify(app)}, stateFile: ${JSON.stringify(join(tmp.dir, 'state', 's.json'))},
    progress: () => undefined, output: () => undefined }).then((r) => console.log(JSON.stringify({ success: r.success, containers: r.containers,
    holding: process.getActiveResourcesInfo() })))`;
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 120_000 });
  expect(child.status).toBe(0);
  const out = JSON.parse(child.stdout.trim().split('\n').pop()!) as { success: boolean; containers: { used: number; coldStarts: number }; holding: string[] };
  expect(out.success).toBe(true);
  expect(out.containers.used).toBeGreaterThan(0);
  expect(out.containers.coldStarts).toBe(out.containers.used);
  // No idle container's timer (nor a worker's port) keeps the event loop: the process ends with its run.
  expect(out.holding.filter((x) => x === 'MessagePort' || x === 'Timeout')).toEqual([]);
}, 150_000);

test('a handler that requires an AWS SDK client local runs do not provide fails at its cold start, saying which and why', async () => {
  writeFileSync(handlerFile, `require('@aws-sdk/client-not-provided');\n${PLANTED}`);
  await expect(containers().invoke(invocation())).rejects.toThrow(/requires @aws-sdk\/client-not-provided, which local runs do not provide \(they provide @aws-sdk\/client-dynamodb/);
});
