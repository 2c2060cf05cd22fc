/**
 * The platform-team case: a NotificationPipelineFleet whose pipelines' alarms notify an SNS topic of the parent stack
 * (`addAlarms({ alarmTopic })`: the nested stacks take the topic as a parameter), nested stacks that also take a KMS key
 * and a bucket of the parent, deployed and destroyed with `runLocalDeploy` and the embedded emulator seeded with the
 * app's identities by a fixtures file (the REAL bundled handler).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { connectedStack } from './apps';
import { tempDir } from './helpers';
import { AccountType, NotificationPipelineFleet, NotificationType } from '../../src';
import { defaultHandlerPath, LocalDeployOptions, readAssembly, runLocalDeploy } from '../../src/local';

const BUNDLE = defaultHandlerPath();
if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run 'npx projen bundle' before the local-deploy tests`);

const IDS = Array.from({ length: 8 }, (_, i) => 4101 + i);

let tmp: { dir: string; cleanup: () => void };
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

/** The app: topic, key and bucket in the parent; the fleet's pipelines alarm to the topic; each nested stack uses the key and the bucket. */
function synthPlatformApp(outdir: string): string {
  const app = new App({ outdir });
  const { stack, connection, roles } = connectedStack(app, 'Platform');
  const alarmTopic = new sns.Topic(stack, 'OnCall');
  const key = new kms.Key(stack, 'DataKey');
  const bucket = new s3.Bucket(stack, 'Archive');
  const fleet = new NotificationPipelineFleet(stack, 'Sellers', {
    connection,
    roles,
    nestedStackCount: 2,
    identities: IDS.map((remoteIdentityId) => ({
      remoteIdentityId, accountType: AccountType.SELLER, notificationTypes: [NotificationType.ORDER_CHANGE],
    })),
  });
  for (const p of fleet.pipelines) {
    p.addAlarms({ alarmTopic });
    const nested = Stack.of(p);
    if (!nested.node.tryFindChild('Audit')) {
      new sns.Topic(nested, 'Audit', { masterKey: key });
      new ssm.StringParameter(nested, 'ArchiveBucket', { stringValue: bucket.bucketName });
    }
  }
  app.synth();
  return outdir;
}

function writeFixtures(file: string, ids: number[]): string {
  const remoteIdentities = ids.map((id) => ({
    id, account: 1001, name: `Seller ${id}`, remote_identity_type_id: 17, remote_identity_type_name: 'Amazon Selling Partner', marketplaces: ['ATVPDKIKX0DER'],
  }));
  writeFileSync(file, JSON.stringify({ remoteIdentities }, undefined, 2));
  return file;
}

interface EmulatorStateFile { state: { subscriptions: Array<{ product: number; status: string; remote_identity?: number | null }> } }
const active107 = (stateDir: string): number[] => {
  const s = JSON.parse(readFileSync(join(stateDir, 'emulator-state.json'), 'utf8')) as EmulatorStateFile;
  return s.state.subscriptions.filter((x) => x.product === 107 && x.status === 'active').map((x) => Number(x.remote_identity)).sort();
};

test('a fleet alarming to a parent topic, with nested stacks using a parent key and bucket, deploys and destroys with a fixtures file', async () => {
  const app = synthPlatformApp(join(tmp.dir, 'cdk.out'));
  // The nested stacks take the parent's topic, key and bucket as parameters (what stopped local-deploy before).
  const nested = readAssembly(app).filter((s) => s.nested);
  expect(nested).toHaveLength(2);
  for (const s of nested) {
    const passed = JSON.stringify(s.nested!.parameters);
    expect(passed).toMatch(/"Ref":"OnCall[0-9A-F]{8}"/);
    expect(passed).toMatch(/DataKey[0-9A-F]{8}/);
    expect(passed).toMatch(/"Ref":"Archive[0-9A-F]{8}"/);
  }
  const fixtures = writeFixtures(join(tmp.dir, 'fleet-fixtures.json'), IDS);
  const stateDir = join(tmp.dir, 'state');
  const lines: string[] = [];
  const opts: LocalDeployOptions = {
    app, stateFile: join(stateDir, 'local-state.json'), fixtures, progress: (l) => lines.push(l), output: () => undefined,
  };

  const created = await runLocalDeploy(opts);
  expect(created.error).toBeUndefined();
  expect(created.success).toBe(true);
  expect(created.resources).toHaveLength(IDS.length);
  expect(lines).toContain(`Embedded emulator seeded with ${fixtures}`);
  expect(active107(stateDir)).toEqual(IDS);

  // Same fixtures again: the saved emulator state is used, nothing changes.
  const again = await runLocalDeploy(opts);
  expect(again.success).toBe(true);
  expect(again.events.filter((e) => e.type !== 'AWS::CloudFormation::Stack')).toEqual([]);

  // Other fixtures (a seller added) are merged into the existing emulator state, without a destroy: the new identity
  // is added, the saved ones kept as they are, and the progress says so.
  const other = writeFixtures(join(tmp.dir, 'other.json'), [...IDS, 4200]);
  const merged: string[] = [];
  const more = await runLocalDeploy({ ...opts, fixtures: other, progress: (l) => merged.push(l) });
  expect(more.error).toBeUndefined();
  expect(more.success).toBe(true);
  expect(merged).toContain(`Embedded emulator: fixtures ${other} merged into the saved state: added 1 remoteIdentities; `
    + `kept ${IDS.length} records the state already has, as the state has them (${IDS.length} remoteIdentities)`);
  const saved = JSON.parse(readFileSync(join(stateDir, 'emulator-state.json'), 'utf8')) as { state: { remoteIdentities: Array<{ id: number }> } };
  expect(saved.state.remoteIdentities.map((r) => r.id)).toContain(4200);

  const destroyed = await runLocalDeploy({ ...opts, destroy: true });
  expect(destroyed.success).toBe(true);
  expect(active107(stateDir)).toEqual([]);
  expect(existsSync(opts.stateFile!)).toBe(false);
}, 120_000);

test('without the fixtures the identities are unknown to the embedded emulator and the deploy fails', async () => {
  const app = synthPlatformApp(join(tmp.dir, 'cdk.out'));
  const r = await runLocalDeploy({ app, stateFile: join(tmp.dir, 'bare', 'local-state.json'), progress: () => undefined, output: () => undefined });
  expect(r.success).toBe(false);
  // The resources' own failures (the parent's nested-stack resource names them in its 'Embedded stack' reason).
  const failed = r.events.filter((e) => e.status === 'CREATE_FAILED' && e.type !== 'AWS::CloudFormation::Stack' && /41\d\d/.test(e.reason ?? ''));
  expect(failed.length).toBeGreaterThan(0);
  // The reason says how the embedded emulator learns the app's identities.
  expect(failed.every((e) => (e.reason ?? '').includes('those of --fixtures FILE'))).toBe(true);
}, 120_000);

test('an emulator URL in plain http to another host, or with fixtures, is refused before anything', async () => {
  const stateFile = join(tmp.dir, 's', 'local-state.json');
  const insecure = await runLocalDeploy({ emulatorUrl: 'http://dpi.example.com:8080', stateFile, progress: () => undefined, output: () => undefined });
  expect(insecure.success).toBe(false);
  expect(insecure.events).toEqual([]);
  expect(insecure.error).toMatch(/emulatorUrl: http:\/\/dpi\.example\.com:8080 is plain http to a host that is not this machine/);
  const both = await runLocalDeploy({
    emulatorUrl: 'http://127.0.0.1:9', fixtures: { remoteIdentities: [] }, stateFile, progress: () => undefined, output: () => undefined,
  });
  expect(both.success).toBe(false);
  expect(both.error).toMatch(/fixtures seed the embedded emulator/);
  expect(existsSync(stateFile)).toBe(false);
});
