/**
 * The monitor's identity health: one identity list read per run counts the app's identities the service marks invalid
 * as `InvalidIdentities` (dimension `Monitor`); under minimal reads (the field absent) nothing is published.
 */
import { HandlerHarness } from './helpers';
import { ReadMode } from '../../src/emulator';
import { monitor as runMonitor, setMetricSink } from '../../src/handler/monitor';

const REVOKED = { id: 366, account: 1001, name: 'Revoked seller', remote_identity_type_id: 17, invalid_identity: 1 as const };
// Another account's invalid identity is not the app's: never counted.
const FOREIGN = { id: 367, account: 1002, name: 'Other', remote_identity_type_id: 17, invalid_identity: 1 as const };

describe.each<ReadMode>(['vendor', 'minimal'])('monitor: InvalidIdentities (%s reads)', (reads) => {
  let h: HandlerHarness;
  let lines: string[];
  let restore: (line: string) => void;
  beforeAll(async () => {
    h = await HandlerHarness.start({ reads });
  });
  afterAll(async () => {
    h.assertNoSecrets();
    await h.stop();
  });
  beforeEach(async () => {
    await h.reset();
    await h.admin('POST', '/fixtures', { remoteIdentities: [REVOKED, FOREIGN] });
    await h.clearRequests();
    lines = [];
    restore = setMetricSink((l) => lines.push(l));
  });
  afterEach(() => setMetricSink(restore));

  test('counts the app\'s invalid identities in one fleet-level line, with one identity read', async () => {
    const event = { Connection: h.connection as never, Subscriptions: [], Identities: ['362', '366', '367'], Monitor: 'App/Monitor' };
    await runMonitor(h.bindRun(event));
    expect((await h.requests()).filter((x) => x.path === '/sri')).toHaveLength(1);
    const metric = lines.map((l) => JSON.parse(l)).filter((x) => 'InvalidIdentities' in x);
    // vendor: 366 is the app's invalid identity (367 is another account's: not listed); minimal: health unknown, nothing published.
    expect(metric).toEqual(reads === 'vendor' ? [{
      _aws: {
        Timestamp: expect.any(Number),
        CloudWatchMetrics: [{ Namespace: 'DataPipelineIntegration', Dimensions: [['Monitor']], Metrics: [{ Name: 'InvalidIdentities', Unit: 'Count' }] }],
      },
      Monitor: 'App/Monitor',
      InvalidIdentities: 1,
    }] : []);
    if (reads === 'minimal') expect(h.logs.join('\n')).toContain('identity health is unknown, InvalidIdentities is not published');
  });

  test('no identities in the event: no identity read, no line', async () => {
    await runMonitor(h.bindRun({ Connection: h.connection as never, Subscriptions: [] }));
    expect((await h.requests()).filter((x) => x.path === '/sri')).toHaveLength(0);
    expect(lines.filter((l) => l.includes('InvalidIdentities'))).toEqual([]);
  });
});
