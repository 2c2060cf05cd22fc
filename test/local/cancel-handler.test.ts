/**
 * CloudFormation's cancellation through the runner, with the real handler: a subscription whose creating POST is slow
 * at the service, and another resource of the operation that fails meanwhile. CloudFormation stops waiting, sends a
 * Delete with an invented physical ID while the Create still runs in its container; the handler ends what the Create
 * made (or ensures it is never made), and touches nothing else.
 */
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { connectedStack } from './apps';
import { tempDir } from './helpers';
import { AccountType, NotificationPipeline, NotificationType, Subscription } from '../../src';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { runLocalDeploy } from '../../src/local';
import { stopWarmContainers } from '../../src/local/containers';

let emu: RunningEmulator;
let tmp: { dir: string; cleanup: () => void };
beforeEach(async () => {
  tmp = tempDir('dpi-cancel-');
  emu = await startEmulator({ host: '127.0.0.1', port: 0 });
});
afterEach(async () => {
  await emu.stop();
  tmp.cleanup();
});
afterAll(() => stopWarmContainers());

/** A subscription `slow` and, independent of it, a pipeline for an identity the service does not know (`Refused`). */
function synth(outdir: string): string {
  const app = new App({ outdir });
  const { stack, connection, roles } = connectedStack(app, 'Cancel');
  new Subscription(stack, 'Slow', {
    connection,
    productId: 3001,
    storageGroupId: 501,
    remoteIdentityId: 362,
    productParameters: { marketplace_id: 'ATVPDKIKX0DER' },
    stageIds: [1001],
    name: 'slow',
  });
  new NotificationPipeline(stack, 'Refused', {
    connection,
    roles,
    remoteIdentityId: 99999,
    accountType: AccountType.SELLER,
    notificationTypes: [NotificationType.ORDER_CHANGE],
  });
  app.synth();
  return outdir;
}

const active = (): string[] => [
  ...emu.state().subscriptions.filter((s) => s.status === 'active').map((s) => `sub ${s.id} ${s.name}`),
  ...emu.state().pipelines.map((p) => `pipeline ${p.id}`),
].sort();

test.each([1000, 2500])('a Create cancelled while its POST takes %i ms ends with nothing of it active, the bystanders untouched', async (delayMs) => {
  const bystanders = active();
  expect(bystanders.length).toBeGreaterThan(0);
  const fault = await fetch(`${emu.url}/_emulator/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ method: 'POST', pathPrefix: '/v2/sub', delayMs, count: 1 }),
  });
  expect(fault.status).toBeLessThan(300);
  const r = await runLocalDeploy({
    app: synth(join(tmp.dir, 'cdk.out')),
    emulatorUrl: emu.url,
    refreshToken: DEFAULT_REFRESH_TOKEN,
    stateFile: join(tmp.dir, 'state', 'local-state.json'),
    progress: () => undefined,
    output: () => undefined,
  });
  expect(r.success).toBe(false);
  const slow = r.events.filter((e) => e.logicalId.startsWith('Slow'));
  expect(r.events.find((e) => e.logicalId.startsWith('Refused') && e.status === 'CREATE_FAILED')).toBeDefined();
  // The slow Create was cancelled (its POST still held) and got a Delete with an invented physical ID.
  expect(slow.find((e) => e.status === 'CREATE_FAILED')?.reason).toBe('Resource creation cancelled');
  expect(slow.find((e) => e.status === 'DELETE_IN_PROGRESS')?.physicalId).toMatch(/^Cancel-Slow[A-Za-z0-9]*-[A-Z0-9]{12}$/);
  expect(slow.find((e) => e.status === 'DELETE_COMPLETE')).toBeDefined();
  expect(r.events.filter((e) => e.type === 'AWS::CloudFormation::Stack').pop()?.status).toBe('ROLLBACK_COMPLETE');
  // Nothing of the operation is left active, and what the app did not make is as it was.
  expect(active()).toEqual(bystanders);
  expect(emu.state().subscriptions.filter((s) => s.name === 'slow' && s.status === 'active')).toEqual([]);
});
