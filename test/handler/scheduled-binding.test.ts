/**
 * The scheduled functions (`index.monitor` of a SubscriptionMonitor, `index.drift` of a DriftMonitor) serve only what
 * they were bound to at synth time (issue 31): anyone who may invoke them could otherwise send another address and
 * receive the refresh token, or have another stack's records read. A run that differs is refused before the secret is
 * read, and nothing is sent anywhere.
 */
import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { HandlerHarness, STACK_ID, useHandlerHarness } from './helpers';
import { BOUND_CONNECTIONS_ENV, BOUND_STACK_ID_ENV } from '../../src/contract';
import { DEFAULT_REFRESH_TOKEN } from '../../src/emulator';
import { configureLocalRuntime, drift, setMetricSink, setStackResourceLister } from '../../src/handler';
import { monitor } from '../../src/handler/monitor';

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

/** A second server on 127.0.0.1 (plain http to loopback passes the transport rule in local runs) that counts requests. */
let trap: Server;
let trapUrl: string;
const trapped: string[] = [];
beforeAll(async () => {
  trap = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c) => { body += String(c); });
    req.on('end', () => {
      trapped.push(`${req.method} ${req.url} ${body}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: { type: 'APIAuth', attributes: { token: 'stolen' } } }));
    });
  });
  await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
  trapUrl = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => trap.close(() => resolve()));
});

let lines: string[];
let restore: (line: string) => void;
beforeEach(() => {
  trapped.length = 0;
  lines = [];
  restore = setMetricSink((l) => lines.push(l));
  h.configure();
});
afterEach(() => {
  setMetricSink(restore);
  setStackResourceLister(undefined);
});

const refusal = (): string => h.logs.filter((l) => l.includes('no usable connection') || l.includes('could not run')).join('\n');

describe('SubscriptionMonitor runs', () => {
  test('a run naming another AuthUrl: every subscription failed, the secret is not read, the other server receives nothing', async () => {
    const sub = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
    const reads = h.secretReads;
    for (const field of ['AuthUrl', 'BaseUrl', 'SubscriptionsUrl'] as const) {
      const r = await monitor({ Connection: { ...h.connection, [field]: trapUrl } as never, Subscriptions: [{ id: sub }] });
      expect(r).toEqual({ subscriptions: 1, failed: 1, calls: 0 });
    }
    expect(h.secretReads).toBe(reads);
    expect(trapped).toEqual([]);
    expect(refusal()).toContain(`Connection.AuthUrl '${trapUrl}' (the function serves '${h.emu.url}')`);
    expect(refusal()).not.toContain(DEFAULT_REFRESH_TOKEN);
  });

  test('another secret or journal table is refused too; the bound connection is read (the control)', async () => {
    const sub = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
    const reads = h.secretReads;
    for (const [field, value] of [['RefreshTokenSecretArn', 'arn:aws:secretsmanager:us-east-1:123456789012:secret:other-AbCdEf'],
      ['JournalTableName', 'someone-elses-journal']] as const) {
      expect((await monitor({ Connection: { ...h.connection, [field]: value } as never, Subscriptions: [{ id: sub }] })).failed).toBe(1);
      expect(refusal()).toContain(`Connection.${field} '${value}'`);
    }
    expect(h.secretReads).toBe(reads);
    const ok = await monitor({ Connection: h.connection as never, Subscriptions: [{ id: sub }] });
    expect(ok).toEqual({ subscriptions: 1, failed: 0, calls: 1 });
  });

  test('a function without its binding (an older deployment) refuses every run', async () => {
    configureLocalRuntime({ readSecret: async () => { throw new Error('must not be read'); }, environment: {}, journalEndpoint: h.journal.endpoint });
    const r = await monitor({ Connection: h.connection as never, Subscriptions: [{ id: '1' }] });
    expect(r.failed).toBe(1);
    expect(refusal()).toContain(`has no ${BOUND_CONNECTIONS_ENV}`);
  });
});

describe('DriftMonitor runs', () => {
  test('a run naming another stack is refused before the secret is read or the stack is listed', async () => {
    let listed = 0;
    setStackResourceLister(async () => {
      listed++;
      return [];
    });
    const reads = h.secretReads;
    const other = STACK_ID.replace('/HandlerTest/', '/TeamA/');
    const r = await drift({ Connection: h.connection as never, StackId: other });
    expect(r).toMatchObject({ failed: true, error: expect.stringContaining(`StackId '${other}' is not the stack this function checks`) });
    const foreign = await drift({ Connection: { ...h.connection, AuthUrl: trapUrl } as never, StackId: STACK_ID });
    expect(foreign.error).toContain(`Connection.AuthUrl '${trapUrl}'`);
    expect(listed).toBe(0);
    expect(h.secretReads).toBe(reads);
    expect(trapped).toEqual([]);
    // The control: the bound stack and connection run.
    expect(await drift({ Connection: h.connection as never, StackId: STACK_ID })).toMatchObject({ failed: false, checked: 0 });
    expect(listed).toBe(1);
  });

  test('a function without its bound stack refuses every run', async () => {
    const env = h.environment();
    delete env[BOUND_STACK_ID_ENV];
    configureLocalRuntime({ readSecret: async () => { throw new Error('must not be read'); }, environment: env, journalEndpoint: h.journal.endpoint });
    const r = await drift({ Connection: h.connection as never, StackId: STACK_ID });
    expect(r.error).toContain(`has no ${BOUND_STACK_ID_ENV}`);
  });
});
