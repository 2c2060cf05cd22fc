/**
 * `dpi import --pipeline-roles`: unified pipelines declared as one NotificationPipelineFleet that adopts them. What the
 * reads show (stored types, region, identity type) is written; what they do not show is a notShown placeholder.
 */
import * as ts from 'typescript';
import { dpi, useCliEmulator } from './helpers';
import { importModel, renderImportedStack } from '../../src/cli/commands/import';
import { parsePipelineRoles, storedRegion, storedTypes } from '../../src/cli/commands/import-pipelines';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator } from '../../src/emulator';
import { pipelineSubscriptionBody, unifiedPipelineBody } from '../local/hand-made';

const ROLE = 'arn:aws:iam::123456789012:role/dpi-management';
const EB_ROLE = 'arn:aws:iam::123456789012:role/service-spapi-firehose-role';
const products = [{ id: '107', name: 'SP-API Notifications', active: 1, is_storage_product: 0, required_meta_fields: [] }] as any;
const pipe = (id: string, identity: number, extra: Record<string, unknown> = {}): any =>
  ({ id, status: 'active', product: 107, remote_identity: identity, storage_group: null, name: `n ${identity}`, ...extra });
const storedOf = (types: string[], region = 'us-west-2'): Record<string, string> => ({
  remote_identity_id: '1',
  subscriptions: JSON.stringify(Object.fromEntries(types.map((t, i) => [t, `up-${i}`]))),
  meta: JSON.stringify({ firehose_arn: `arn:aws:firehose:${region}:123456789012:deliverystream/x`, s3_bucket_name: 'b' }),
});

describe('parsePipelineRoles', () => {
  test('one or two role ARNs, or a construct path; anything else exits 2 naming the value', () => {
    expect(parsePipelineRoles(`${ROLE},${EB_ROLE}`)).toEqual({ managementRoleArn: ROLE, eventBusRoleArn: EB_ROLE });
    expect(parsePipelineRoles(ROLE)).toEqual({ managementRoleArn: ROLE });
    expect(parsePipelineRoles('Shared/PipelineRoles')).toEqual({ constructPath: 'Shared/PipelineRoles' });
    expect(() => parsePipelineRoles('arn:aws:s3:::bucket')).toThrow("--pipeline-roles 'arn:aws:s3:::bucket' is not accepted");
    expect(() => parsePipelineRoles(`${ROLE},${EB_ROLE},${ROLE}`)).toThrow('is not accepted');
    expect(() => parsePipelineRoles("x'); evil('")).toThrow('is neither role ARNs');
  });
});

describe('stored types and region', () => {
  test('the upstream subscriptions map gives the types (sorted); the result meta gives the region; absent or unreadable: undefined', () => {
    expect(storedTypes(storedOf(['REPORT_PROCESSING_FINISHED', 'ORDER_CHANGE']))).toEqual(['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED']);
    // A product-107 record that names its own key: any stored map of type names to upstream IDs.
    expect(storedTypes({ upstream: JSON.stringify({ ORDER_CHANGE: 'u1' }) })).toEqual(['ORDER_CHANGE']);
    expect(storedTypes({ subscriptions: '{}' })).toBeUndefined();
    expect(storedTypes({ subscriptions: 'not json' })).toBeUndefined();
    expect(storedTypes(undefined)).toBeUndefined();
    expect(storedRegion(storedOf(['ORDER_CHANGE'], 'us-east-2'))).toBe('us-east-2');
    expect(storedRegion({ aws_region: 'ap-east-1' })).toBe('ap-east-1');
    expect(storedRegion({ meta: JSON.stringify({ firehose_arn: 'arn:aws:firehose:eu-west-1:1:deliverystream/x' }) })).toBeUndefined();
    expect(storedRegion({})).toBeUndefined();
  });
});

describe('importModel / renderImportedStack with pipeline roles', () => {
  test('declares the pipelines as one fleet with the read values, RETAIN by adoption, and the PATCH comment', () => {
    const stored = new Map([['11', storedOf(['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'])], ['12', storedOf(['ITEM_SALES_EVENT_CHANGE'])]]);
    const model = importModel([pipe('12', 363, { storage_group: 501 }), pipe('11', 362)], products,
      { stored, pipelineRoles: { managementRoleArn: ROLE, eventBusRoleArn: EB_ROLE }, identityTypes: new Map([['362', 17], ['363', 18]]) });
    expect(model.pipelines).toEqual([
      {
        subscriptionId: '11',
        remoteIdentityId: 362,
        accountType: 'seller',
        notificationTypes: ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'],
        deploymentRegion: 'us-west-2',
        name: 'n 362',
        status: 'active',
      },
      {
        subscriptionId: '12',
        remoteIdentityId: 363,
        accountType: 'vendor',
        notificationTypes: ['ITEM_SALES_EVENT_CHANGE'],
        deploymentRegion: 'us-west-2',
        name: 'n 363',
        storageGroupId: 501,
        status: 'active',
      },
    ]);
    expect(model.notImported).toEqual([]);
    expect(model.pipelinePlaceholders).toEqual([]);
    const code = renderImportedStack(model, { className: 'S', module: 'm' });
    expect(code).toContain("import { AccountType, NotificationPipelineFleet, NotificationPipelineRoles, NotificationType, ServiceConnection, Subscription } from 'm';");
    expect(code).toContain('the first deploy takes\n// each over as the service stores it, with no changing call');
    expect(code).toContain('a pipeline changed in between fails the deploy before any change, naming the difference');
    expect(code).toContain(`    const pipelineRoles = NotificationPipelineRoles.fromRoleArns(this, 'PipelineRoles', {\n      managementRoleArn: '${ROLE}',\n`
      + `      eventBusRoleArn: '${EB_ROLE}',\n    });\n    new NotificationPipelineFleet(this, 'NotificationPipelines', {`);
    expect(code).toContain('        {\n          remoteIdentityId: 362,\n          accountType: AccountType.SELLER,\n'
      + '          notificationTypes: [NotificationType.ORDER_CHANGE, NotificationType.REPORT_PROCESSING_FINISHED],\n'
      + "          name: 'n 362',\n          deploymentRegion: 'us-west-2',\n          existingSubscriptionId: 11,\n        },");
    // An event-bus-only selection: a later unified PATCH recreates its delivery resources (said next to it).
    expect(code).toContain('        { // no queue type: a later unified PATCH (a change of types, roles or region) cleans up and recreates its delivery '
      + 'resources\n          remoteIdentityId: 363,');
    expect(code).not.toContain('notShown');
  });

  test('values no read shows are typed placeholders that fail the synth; the construct-path form looks the roles up', () => {
    const model = importModel([pipe('11', 362)], products, { pipelineRoles: { constructPath: 'Shared/Roles' } });
    expect(model.pipelines![0]).toEqual({ subscriptionId: '11', remoteIdentityId: 362, name: 'n 362', status: 'active' });
    expect(model.pipelinePlaceholders).toEqual(['pipeline 11 (remote identity 362): accountType, notificationTypes, deploymentRegion']);
    const code = renderImportedStack(model, { className: 'S', module: 'm' });
    expect(code).toContain("accountType: notShown<AccountType>('the account type of pipeline 11 (remote identity 362)'),");
    expect(code).toContain("notificationTypes: notShown<NotificationType[]>('the notification types of pipeline 11 (remote identity 362)'),");
    expect(code).toContain("deploymentRegion: notShown<string>('the deployment region of pipeline 11 (remote identity 362)'),");
    expect(code).toContain('function notShown<T>(what: string): T {\n  throw new Error(`dpi import: ${what} is not shown by the service\'s reads;');
    // The placeholder fails when it runs (the synth), naming what is missing.
    const helper = code.slice(code.indexOf('function notShown'), code.indexOf('\n}\n', code.indexOf('function notShown')) + 2);
    const js = ts.transpileModule(`${helper}\nnotShown('the account type of pipeline 11 (remote identity 362)');`, {}).outputText;
    expect(() => new Function(js)()).toThrow("dpi import: the account type of pipeline 11 (remote identity 362) is not shown by the service's reads; "
      + 'replace notShown(...) with the value the pipeline has');
    expect(code).toContain("const pipelineRoles = rolesAt(this, 'Shared/Roles');");
    expect(code).toContain('function rolesAt(scope: Construct, path: string): INotificationPipelineRoles {');
    expect(code).toContain('INotificationPipelineRoles, NotificationPipelineFleet');
  });

  test('event-bus types without an event-bus role ARN exit 2 naming the pipelines; without the flag pipelines are refused as before', () => {
    const stored = new Map([['12', storedOf(['ITEM_SALES_EVENT_CHANGE'])]]);
    expect(() => importModel([pipe('12', 363)], products, { stored, pipelineRoles: { managementRoleArn: ROLE } }))
      .toThrow("--pipeline-roles gives no event-bus role ARN, and the pipeline 12 has event-bus types: give '<management role ARN>,<event-bus role ARN>'");
    expect(() => importModel([pipe('12', 363)], products, { stored })).toThrow('dpi import cannot declare the unified notification pipeline 12');
    expect(importModel([pipe('12', 363)], products, { stored, skipPipelines: true }).pipelines).toBeUndefined();
  });
});

// The CLI against the emulator (vendor reads): a pipeline made by hand through the service's endpoints.
let emu: RunningEmulator;
useCliEmulator((e) => {
  emu = e;
}, { reads: 'vendor' });

async function call(method: string, path: string, body: unknown): Promise<any> {
  const t = await fetch(`${emu.url}/auth/api/ref`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ data: { type: 'APIAuth', attributes: { refresh_token: DEFAULT_REFRESH_TOKEN } } }),
  });
  const token = ((await t.json()) as any).data.attributes.token;
  const r = await fetch(`${emu.url}${path}`, { method, headers: { 'authorization': `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return r.json();
}

test('dpi import --pipeline-roles reads the stored types, the region and the identity type; --json lists the pipelines', async () => {
  const made = await call('POST', '/service/sp/notifications-unified/362', unifiedPipelineBody({ types: ['REPORT_PROCESSING_FINISHED'], role: ROLE, region: 'us-east-2' }));
  const sub = await call('POST', '/v2/sub', pipelineSubscriptionBody(362, made, 'by hand'));
  const id = String(sub.data.id);
  const refused = await dpi(['import'], { emu });
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain(`cannot declare the unified notification pipeline ${id}`);

  const r = await dpi(['import', '--pipeline-roles', ROLE, '--json'], { emu });
  expect([r.code, r.stderr]).toEqual([0, '']);
  const model = JSON.parse(r.stdout);
  expect(model.pipelines).toEqual([{
    subscriptionId: id,
    remoteIdentityId: 362,
    accountType: 'seller',
    notificationTypes: ['REPORT_PROCESSING_FINISHED'],
    deploymentRegion: 'us-east-2',
    name: 'by hand',
    status: 'active',
  }]);
  expect(model.pipelineRoles).toEqual({ managementRoleArn: ROLE });
  expect(model.code).toContain(`existingSubscriptionId: ${id},`);

  const bad = await dpi(['import', '--pipeline-roles', 'arn:aws:iam::1:user/x'], { emu });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--pipeline-roles \'arn:aws:iam::1:user/x\' is not accepted');
  const help = await dpi(['import', '--help'], { emu });
  expect(help.stdout).toContain('--pipeline-roles <roles>');
});
