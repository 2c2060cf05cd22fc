/**
 * The scheduled functions (`index.monitor` of a SubscriptionMonitor, `index.drift` of a DriftMonitor) serve only the
 * run their rule sends, bound at synth time (issue 31): anyone who may invoke them could otherwise send another
 * address and receive the refresh token, or another stack, namespace or metadata key and raise false alarms. A run that
 * differs is refused before the secret is read: nothing is sent anywhere, nothing is published, and the invoker learns
 * nothing of what is bound (the reason is in the function's log).
 */
import { HandlerHarness, STACK_ID, useHandlerHarness } from './helpers';
import { useTrapServer } from './trap-server';
import { BOUND_RUN_ENV } from '../../src/contract';
import { DEFAULT_REFRESH_TOKEN } from '../../src/emulator';
import { configureLocalRuntime, drift, setMetricSink, setStackResourceLister } from '../../src/handler';
import { monitor } from '../../src/handler/monitor';
import { REFUSED_RUN } from '../../src/handler/scheduled-binding';

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

const trap = useTrapServer();

let lines: string[];
let restore: (line: string) => void;
beforeEach(() => {
  lines = [];
  restore = setMetricSink((l) => lines.push(l));
  h.configure();
});
afterEach(() => {
  setMetricSink(restore);
  setStackResourceLister(undefined);
});

const logged = (): string => h.logs.filter((l) => l.includes('run refused')).join('\n');

/** The run is refused as an invoker sees it (no bound value in the error), nothing read, sent or published. */
async function refused(run: Promise<unknown>, reads: number): Promise<void> {
  await expect(run).rejects.toThrow(REFUSED_RUN);
  expect(h.secretReads).toBe(reads);
  expect(trap.requests).toEqual([]);
  expect(lines).toEqual([]);
}

describe('SubscriptionMonitor runs', () => {
  test('another AuthUrl, gateway or subscriptions address: refused; the secret is not read, the other server receives nothing', async () => {
    const sub = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
    h.boundRun = { Connection: h.connection, Namespace: 'DataPipelineIntegration' };
    const reads = h.secretReads;
    for (const field of ['AuthUrl', 'BaseUrl', 'SubscriptionsUrl'] as const) {
      await refused(monitor({ Connection: { ...h.connection, [field]: trap.url } as never, Namespace: 'DataPipelineIntegration', Subscriptions: [{ id: sub }] }), reads);
      expect(logged()).toContain(`in Connection.${field}; nothing was done`);
    }
    expect(logged()).not.toContain(trap.url);
    expect(logged()).not.toContain(DEFAULT_REFRESH_TOKEN);
  });

  test('another secret, journal table, metadata key, namespace or source: refused; the bound run is read (the control)', async () => {
    const sub = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
    const bound = { Connection: h.connection, Namespace: 'DataPipelineIntegration' };
    h.boundRun = bound;
    const reads = h.secretReads;
    const variants: Array<[string, Record<string, unknown>]> = [
      ['Connection.RefreshTokenSecretArn', { Connection: { ...h.connection, RefreshTokenSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:other-AbCdEf' } }],
      ['Connection.JournalTableName', { Connection: { ...h.connection, JournalTableName: 'someone-elses-journal' } }],
      ['Connection.PipelineSubscriptionsKey', { Connection: { ...h.connection, PipelineSubscriptionsKey: 'meta' } }],
      ['Namespace', { Namespace: 'Victim' }],
      ['Source', { Source: 'HEALTHCHECKS' }],
    ];
    for (const [field, change] of variants) {
      await refused(monitor({ ...bound, ...change, Subscriptions: [{ id: sub }] } as never), reads);
      expect(logged()).toContain(`in ${field}; nothing was done`);
    }
    expect(await monitor({ ...bound, Subscriptions: [{ id: sub }] } as never)).toEqual({ subscriptions: 1, failed: 0, calls: 1 });
  });

  test('a function without its binding (an older deployment) refuses every run', async () => {
    configureLocalRuntime({ readSecret: async () => { throw new Error('must not be read'); }, environment: {}, journalEndpoint: h.journal.endpoint });
    await refused(monitor({ Connection: h.connection as never, Subscriptions: [{ id: '1' }] }), h.secretReads);
    expect(logged()).toContain(`has no ${BOUND_RUN_ENV}`);
  });
});

describe('DriftMonitor runs', () => {
  test('another stack or address: refused before the secret is read or the stack is listed, and no DriftCheckFailed is published', async () => {
    let listed = 0;
    setStackResourceLister(async () => {
      listed++;
      return [];
    });
    const bound = { Connection: h.connection, StackId: STACK_ID, Namespace: 'DataPipelineIntegration' };
    h.boundRun = bound;
    const reads = h.secretReads;
    await refused(drift({ ...bound, StackId: STACK_ID.replace('/HandlerTest/', '/TeamA/') } as never), reads);
    expect(logged()).toContain('in StackId; nothing was done');
    await refused(drift({ ...bound, Connection: { ...h.connection, AuthUrl: trap.url } } as never), reads);
    expect(listed).toBe(0);
    // The control: the bound run runs.
    expect(await drift(bound as never)).toMatchObject({ failed: false, checked: 0 });
    expect(listed).toBe(1);
  });
});
