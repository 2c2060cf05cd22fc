import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, CfnOutput, Fn, NestedStack, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks, ServerlessChecks } from 'cdk-nag';
import { fixture, roles, SECRET_ARN } from './helpers';
import {
  AccountType, NotificationPipeline, NotificationPipelineFleet, NotificationPipelineFleetIdentity,
  NotificationPipelineRoles, NotificationType, PartialFailure, ServiceConnection, ServiceEndpoints,
} from '../../src';
import { fleetBucketOf, jumpConsistentHash } from '../../src/notifications/fleet-hash';
import { tempDir } from '../local/helpers';

const seller = (remoteIdentityId: number, extra: Partial<NotificationPipelineFleetIdentity> = {}): NotificationPipelineFleetIdentity => ({
  remoteIdentityId, accountType: AccountType.SELLER, notificationTypes: [NotificationType.ORDER_CHANGE], ...extra,
});
const ids = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);

describe('NotificationPipelineFleet', () => {
  test('spreads the pipelines over nested stacks that use the parent\'s provider, connection and roles', () => {
    const f = fixture();
    const r = roles(f.stack);
    const fleet = new NotificationPipelineFleet(f.stack, 'Fleet', {
      connection: f.connection, roles: r, nestedStackCount: 3, identities: ids(2001, 12).map((id) => seller(id)),
    });
    const parent = Template.fromStack(f.stack);
    // One provider in the parent (handler, isComplete, framework onEvent, isComplete and onTimeout); none in the nested stacks.
    parent.resourceCountIs('AWS::Lambda::Function', 5);
    parent.resourceCountIs('AWS::CloudFormation::Stack', fleet.nestedStacks.length);
    expect(fleet.nestedStacks.length).toBe(3);
    let total = 0;
    for (const nested of fleet.nestedStacks) {
      const t = Template.fromStack(nested);
      t.resourceCountIs('AWS::Lambda::Function', 0);
      const pipelines = t.findResources('Custom::DpiNotificationPipeline');
      total += Object.keys(pipelines).length;
      for (const [logicalId, res] of Object.entries(pipelines)) {
        const rid = String(res.Properties.RemoteIdentityId);
        // Logical ID from the identity, never from the list position; the journal key is stable and names the parent stack.
        expect(logicalId).toMatch(new RegExp(`^Identity${rid}[0-9A-F]{8}$`));
        expect(res.Properties.JournalKey).toBe(`MyStack/Fleet/${nested.node.id}/Identity${rid}`);
        expect(res.Properties.ServiceToken).toEqual({ Ref: expect.stringMatching(/^referencetoMyStackDpiProviderframeworkonEvent/) });
        expect(res.Properties.Connection.RefreshTokenSecretArn).toBe(SECRET_ARN);
        expect(res.Properties.RoleArn).toEqual({ Ref: expect.stringMatching(/^referencetoMyStackRolesManagementRole/) });
        expect(nested.node.id).toBe(`Pipelines${fleetBucketOf(Number(rid), 3)}`);
      }
    }
    expect(total).toBe(12);
    // The parent passes its provider's service token and the roles to every nested stack, which waits for the roles.
    for (const res of Object.values(parent.findResources('AWS::CloudFormation::Stack'))) {
      const params = Object.entries(res.Properties.Parameters as Record<string, unknown>);
      expect(params).toEqual(expect.arrayContaining([
        [expect.stringMatching(/^referencetoMyStackDpiProviderframeworkonEvent/), { 'Fn::GetAtt': [expect.stringMatching(/^DpiProviderframeworkonEvent/), 'Arn'] }],
        [expect.stringMatching(/^referencetoMyStackRolesManagementRole/), { 'Fn::GetAtt': [expect.stringMatching(/^RolesManagementRole/), 'Arn'] }],
      ]));
      expect(res.DependsOn).toEqual(expect.arrayContaining([expect.stringMatching(/^RolesManagementRole/)]));
    }
  });

  test('per-identity settings override the fleet\'s defaults', () => {
    const f = fixture();
    const fleet = new NotificationPipelineFleet(f.stack, 'Fleet', {
      connection: f.connection,
      roles: roles(f.stack),
      deploymentRegion: 'us-west-2',
      storageGroupId: 501,
      partialFailure: PartialFailure.ALLOW,
      removalPolicy: RemovalPolicy.RETAIN,
      identities: [
        seller(362),
        {
          remoteIdentityId: 363,
          accountType: AccountType.VENDOR,
          notificationTypes: [NotificationType.ITEM_SALES_EVENT_CHANGE],
          name: 'Vendor',
          deploymentRegion: 'us-east-2',
          storageGroupId: 502,
          partialFailure: PartialFailure.FAIL,
          removalPolicy: RemovalPolicy.DESTROY,
        },
      ],
    });
    const resourceOf = (p: NotificationPipeline): { Properties: Record<string, unknown>; DeletionPolicy: string } => {
      const t = Template.fromStack(Stack.of(p)).findResources('Custom::DpiNotificationPipeline', { Properties: { RemoteIdentityId: String(p.remoteIdentityId) } });
      return Object.values(t)[0] as { Properties: Record<string, unknown>; DeletionPolicy: string };
    };
    const s = resourceOf(fleet.pipelineFor(362));
    expect(s.Properties).toMatchObject({ DeploymentRegion: 'us-west-2', StorageGroupId: '501', PartialFailure: 'ALLOW', AccountType: 'seller' });
    expect(s.Properties.Name).toBeUndefined();
    // The resource is always Delete: the handler keeps (releases) or ends the record by the RemovalPolicy property.
    expect(s.DeletionPolicy).toBe('Delete');
    expect(s.Properties.RemovalPolicy).toBe('retain');
    const v = resourceOf(fleet.pipelineFor(363));
    expect(v.Properties).toMatchObject({ DeploymentRegion: 'us-east-2', StorageGroupId: '502', PartialFailure: 'FAIL', AccountType: 'vendor', Name: 'Vendor' });
    expect(v.DeletionPolicy).toBe('Delete');
    expect(v.Properties.RemovalPolicy).toBe('destroy');
  });

  test('accessors: pipelineFor, pipelines by ID, nestedStacks; an unknown identity is named', () => {
    const f = fixture();
    const fleet = new NotificationPipelineFleet(f.stack, 'Fleet', {
      connection: f.connection, roles: roles(f.stack), identities: [seller(903), seller(17), seller(450)],
    });
    expect(fleet.pipelines.map((p) => p.remoteIdentityId)).toEqual([17, 450, 903]);
    expect(fleet.pipelineFor(450)).toBeInstanceOf(NotificationPipeline);
    expect(fleet.pipelineFor(450).remoteIdentityId).toBe(450);
    expect(Stack.of(fleet.pipelineFor(450))).toBeInstanceOf(NestedStack);
    expect(fleet.nestedStacks.every((s) => s instanceof NestedStack)).toBe(true);
    // The documented default of nestedStackCount.
    expect(fleet.nestedStackCount).toBe(16);
    expect(Stack.of(fleet.pipelineFor(903)).node.id).toBe(`Pipelines${String(fleetBucketOf(903, 16)).padStart(2, '0')}`);
    expect(() => fleet.pipelineFor(451)).toThrow("MyStack/Fleet: remoteIdentityId '451' is not an identity of this fleet");
  });

  test('identitiesMovedBy: the identities whose nested stack differs under another count, ascending', () => {
    const f = fixture();
    const identityIds = Array.from({ length: 40 }, (_, i) => 100 + i * 7);
    const fleet = new NotificationPipelineFleet(f.stack, 'Fleet', {
      connection: f.connection, roles: roles(f.stack), identities: identityIds.map((id) => seller(id)), nestedStackCount: 4,
    });
    const moved = fleet.identitiesMovedBy(6);
    expect(moved).toEqual(identityIds.filter((id) => fleetBucketOf(id, 6) !== fleetBucketOf(id, 4)));
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.length).toBeLessThan(identityIds.length);
    // Growing moves identities into the new nested stacks only.
    expect(moved.every((id) => fleetBucketOf(id, 6) >= 4)).toBe(true);
    expect(fleet.identitiesMovedBy(4)).toEqual([]);
    expect(() => fleet.identitiesMovedBy(0)).toThrow("MyStack/Fleet: identitiesMovedBy '0' is not a nested stack count");
  });

  test('synth errors: a duplicate identity names both entries; invalid types, regions and counts name the value', () => {
    const make = (identities: NotificationPipelineFleetIdentity[], extra: Record<string, unknown> = {}): void => {
      const f = fixture();
      new NotificationPipelineFleet(f.stack, 'Fleet', { connection: f.connection, roles: roles(f.stack), identities, ...extra });
    };
    expect(() => make([seller(1), seller(2, { name: 'EU' }), seller(3), seller(2, { name: 'US' })]))
      .toThrow("MyStack/Fleet: identities '2' lists remote identity 2 twice (identities[1] 'EU' and identities[3] 'US')");
    expect(() => make([seller(1), { remoteIdentityId: 2, accountType: AccountType.VENDOR, notificationTypes: [NotificationType.ORDER_CHANGE] }]))
      .toThrow(/MyStack\/Fleet\/Pipelines\d+\/Identity2: notificationTypes 'ORDER_CHANGE' is not valid for account type vendor/);
    expect(() => make([seller(1, { deploymentRegion: 'eu-west-1' })])).toThrow(/Identity1: deploymentRegion 'eu-west-1' is not accepted/);
    expect(() => make([seller(1)], { deploymentRegion: 'eu-west-1' })).toThrow(/Identity1: deploymentRegion 'eu-west-1' is not accepted/);
    expect(() => make([seller(1.5)])).toThrow("MyStack/Fleet: identities[0].remoteIdentityId '1.5' is not a positive integer ID");
    expect(() => make([])).toThrow("MyStack/Fleet: identities '' is empty");
    expect(() => make([seller(1)], { nestedStackCount: 0 })).toThrow("MyStack/Fleet: nestedStackCount '0' is not accepted");
    // An identity that already has a NotificationPipeline in the app.
    const f = fixture();
    const r = roles(f.stack);
    new NotificationPipeline(f.stack, 'Single', { connection: f.connection, roles: r, ...seller(7) });
    expect(() => new NotificationPipelineFleet(f.stack, 'Fleet', { connection: f.connection, roles: r, identities: [seller(7)] }))
      .toThrow(/Identity7: remoteIdentityId '7' already has a notification pipeline in this app \('MyStack\/Single'\)/);
  });

  test('a nested stack over the resource limit is a synth error naming it, its count and the fix', () => {
    const app = new App({ context: { '@aws-cdk/core:stackResourceLimit': 10 } });
    const stack = new Stack(app, 'S', { env: { account: '123456789012', region: 'us-east-1' } });
    const connection = new ServiceConnection(stack, 'Dpi', {
      endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
      refreshToken: secretsmanager.Secret.fromSecretCompleteArn(stack, 'T', SECRET_ARN),
      journalTableName: 'dpi-lifecycle-journal',
    });
    new NotificationPipelineFleet(stack, 'Fleet', {
      connection,
      roles: NotificationPipelineRoles.fromRoleArns(stack, 'R', { managementRoleArn: 'arn:aws:iam::123456789012:role/m' }),
      nestedStackCount: 1,
      identities: ids(100, 11).map((id) => seller(id, { notificationTypes: [NotificationType.REPORT_PROCESSING_FINISHED] })),
    });
    expect(() => app.synth()).toThrow(/S\/Fleet\/Pipelines0: nested stack 0 of the fleet has 11 resources \(11 pipelines\), more than CloudFormation's limit of 10; raise nestedStackCount \(now 1;/);
  });

  test('a nested stack with more than 200 outputs (parent references to pipeline attributes) is a synth error naming it', () => {
    const f = fixture();
    const fleet = new NotificationPipelineFleet(f.stack, 'Fleet', {
      connection: f.connection, roles: roles(f.stack), nestedStackCount: 1, identities: ids(100, 67).map((id) => seller(id)),
    });
    // Three attributes per pipeline used in the parent: 201 outputs.
    for (const p of fleet.pipelines) {
      new CfnOutput(f.stack, `Out${p.remoteIdentityId}`, { value: Fn.join(',', [p.subscriptionId, p.prefix, p.bucket.bucketName]) });
    }
    expect(() => f.app.synth()).toThrow(/MyStack\/Fleet\/Pipelines0: nested stack 0 of the fleet has 201 outputs \(67 pipelines\), more than CloudFormation's limit of 200/);
  });

  test('cdk-nag: no unacknowledged finding on the fleet in any of the four packs', () => {
    const f = fixture();
    new NotificationPipelineFleet(f.stack, 'Fleet', { connection: f.connection, roles: roles(f.stack), nestedStackCount: 2, identities: ids(1, 6).map((id) => seller(id)) });
    f.app.synth();
    for (const pack of [new AwsSolutionsChecks(), new HIPAASecurityChecks(), new NIST80053R5Checks(), new ServerlessChecks()]) {
      const found = pack.validateScope(f.app).violations
        .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`))
        .filter((x) => x.includes('/Fleet/') || x.includes('/DpiProvider/'));
      expect([pack.readPackName, found]).toEqual([pack.readPackName, []]);
    }
    // Not vacuous: the packs do look into the fleet's nested stacks.
    const g = fixture();
    const other = new NotificationPipelineFleet(g.stack, 'Fleet', { connection: g.connection, roles: roles(g.stack), nestedStackCount: 1, identities: [seller(1)] });
    new sqs.Queue(other.nestedStacks[0], 'Unencrypted', { encryption: sqs.QueueEncryption.UNENCRYPTED });
    g.app.synth();
    const seen = new AwsSolutionsChecks().validateScope(g.app).violations
      .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`));
    expect(seen).toEqual(expect.arrayContaining([expect.stringMatching(/^AwsSolutions-SQS\d MyStack\/Fleet\/Pipelines0\/Unencrypted/)]));
  });
});

describe('stable assignment', () => {
  /** Synthesizes a fleet of `identities` and returns its nested templates by file name (the name derives from the nested stack path). */
  function nestedTemplates(dir: string, identities: number[], count = 8): Map<string, string> {
    const app = new App({ outdir: dir });
    const stack = new Stack(app, 'Parent', { env: { account: '123456789012', region: 'us-east-1' } });
    const connection = new ServiceConnection(stack, 'Dpi', {
      endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
      refreshToken: secretsmanager.Secret.fromSecretCompleteArn(stack, 'T', SECRET_ARN),
      journalTableName: 'dpi-lifecycle-journal',
    });
    new NotificationPipelineFleet(stack, 'Fleet', {
      connection, roles: roles(stack), nestedStackCount: count, identities: identities.map((id) => seller(id)),
    });
    app.synth();
    const files = readdirSync(dir).filter((n) => n.endsWith('.nested.template.json'));
    return new Map(files.map((n) => [n, readFileSync(join(dir, n), 'utf8')]));
  }
  /** The parent's resources whose definition differs between two synths of the fleet app. */
  const parentChanges = (a: string, b: string): string[] => {
    const read = (dir: string): Record<string, unknown> => (JSON.parse(readFileSync(join(dir, 'Parent.template.json'), 'utf8')) as { Resources: Record<string, unknown> }).Resources;
    const ra = read(a);
    const rb = read(b);
    return [...new Set([...Object.keys(ra), ...Object.keys(rb)])].filter((k) => JSON.stringify(ra[k]) !== JSON.stringify(rb[k]));
  };
  const differing = (a: Map<string, string>, b: Map<string, string>): string[] =>
    [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k));

  test('adding or removing one identity changes exactly one nested template; the order of the list changes none', () => {
    const tmp = tempDir();
    try {
      const base = ids(5000, 60);
      const before = nestedTemplates(join(tmp.dir, 'a'), base);
      expect(before.size).toBe(8);
      // Added in the middle of the list.
      const added = nestedTemplates(join(tmp.dir, 'b'), [...base.slice(0, 30), 7777, ...base.slice(30)]);
      const changedByAdd = differing(before, added);
      expect(changedByAdd).toHaveLength(1);
      expect(added.get(changedByAdd[0])).toContain('"RemoteIdentityId": "7777"');
      // In the parent, only that nested stack's resource changes (its template URL).
      const parentAdd = parentChanges(join(tmp.dir, 'a'), join(tmp.dir, 'b'));
      expect(parentAdd).toHaveLength(1);
      expect(parentAdd[0]).toMatch(new RegExp(`^FleetPipelines${fleetBucketOf(7777, 8)}NestedStack`));
      // Removed from the middle.
      const removed = nestedTemplates(join(tmp.dir, 'c'), base.filter((id) => id !== 5017));
      const changedByRemove = differing(before, removed);
      expect(changedByRemove).toHaveLength(1);
      expect(before.get(changedByRemove[0])).toContain('"RemoteIdentityId": "5017"');
      expect(parentChanges(join(tmp.dir, 'a'), join(tmp.dir, 'c'))).toHaveLength(1);
      // Shuffled: byte-identical.
      const shuffled = nestedTemplates(join(tmp.dir, 'd'), [...base].reverse());
      expect(differing(before, shuffled)).toEqual([]);
      expect(parentChanges(join(tmp.dir, 'a'), join(tmp.dir, 'd'))).toEqual([]);
    } finally {
      tmp.cleanup();
    }
  });

  test('jump consistent hash: even spread, and a larger count moves identities only into the new nested stacks', () => {
    const all = ids(1, 2000);
    const load = new Array(16).fill(0);
    for (const id of all) load[fleetBucketOf(id, 16)] += 1;
    expect(Math.min(...load)).toBeGreaterThan(125 * 0.7);
    expect(Math.max(...load)).toBeLessThan(125 * 1.3);
    let moved = 0;
    for (const id of all) {
      const a = fleetBucketOf(id, 16);
      const b = fleetBucketOf(id, 20);
      if (a !== b) {
        moved += 1;
        expect(b).toBeGreaterThanOrEqual(16);
      }
    }
    // About 1 - 16/20 = 20 % move.
    expect(moved / all.length).toBeGreaterThan(0.15);
    expect(moved / all.length).toBeLessThan(0.25);
    // Reference values of the published algorithm (key 0 stays in bucket 0; results stay below the count).
    expect(jumpConsistentHash(0n, 1)).toBe(0);
    expect(jumpConsistentHash(0n, 1000)).toBe(0);
    for (let k = 1n; k < 50n; k++) expect(jumpConsistentHash(k, 7)).toBeLessThan(7);
  });
});

describe('resource limit of a plain stack', () => {
  test('a stack past 500 resources with single NotificationPipelines gets the library\'s message: how many fit, and the fleet', () => {
    const f = fixture();
    const r = roles(f.stack);
    // The provider's 21 resources (handler and isComplete functions, the framework with its waiter, roles, logs).
    for (const id of ids(1, 480)) {
      new NotificationPipeline(f.stack, `P${id}`, { connection: f.connection, roles: r, ...seller(id, { notificationTypes: [NotificationType.REPORT_PROCESSING_FINISHED] }) });
    }
    expect(() => f.app.synth()).toThrow(/^Validation failed with the following errors:\n {2}\[MyStack\] MyStack: the stack has 501 resources, more than CloudFormation's limit of 500, with 480 NotificationPipelines \(480 resources\) and 21 other resources: at most 479 pipelines fit in this stack; declare the pipelines with a NotificationPipelineFleet/);
  });

  test('the count follows what a pipeline costs (alarms) and the stack resource limit context; under the limit, no message', () => {
    const build = (count: number): App => {
      const app = new App({ context: { '@aws-cdk/core:stackResourceLimit': 40 } });
      const stack = new Stack(app, 'S', { env: { account: '123456789012', region: 'us-east-1' } });
      const connection = new ServiceConnection(stack, 'Dpi', {
        endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
        refreshToken: secretsmanager.Secret.fromSecretCompleteArn(stack, 'T', SECRET_ARN),
        journalTableName: 'dpi-lifecycle-journal',
      });
      const r = NotificationPipelineRoles.fromRoleArns(stack, 'R', { managementRoleArn: 'arn:aws:iam::123456789012:role/m' });
      for (const id of ids(1, count)) {
        new NotificationPipeline(stack, `P${id}`, { connection, roles: r, ...seller(id, { notificationTypes: [NotificationType.REPORT_PROCESSING_FINISHED] }) }).addAlarms();
      }
      return app;
    };
    // Under the limit: synthesizes. Each pipeline with its alarms costs 4 resources.
    const ok = build(5).synth().getStackByName('S').template as { Resources: Record<string, unknown> };
    const other = Object.keys(ok.Resources).length - 5 * 4;
    const app = build(9);
    const fit = Math.floor((40 - other) / 4);
    expect(fit).toBeLessThan(9);
    expect(() => app.synth()).toThrow(`at most ${fit} pipelines fit in this stack`);
  });
});
