import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, CfnResource, NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { IConstruct } from 'constructs';
import { buildExampleApp } from '../../examples/app';
import {
  AccountType, DriftMonitor, HistoryRequest, NotificationPipeline, NotificationPipelineFleet,
  NotificationPipelineRoles, NotificationType, ServiceConnection, ServiceEndpoints, Subscription,
  SubscriptionMonitor,
} from '../../src';
import { fleetBucketOf } from '../../src/notifications/fleet-hash';

/**
 * Every number README.md, docs/constructs.md, docs/fleets.md, docs/handler.md and docs/operations.md state about what
 * the constructs synthesize (functions, resources, alarms, stacks, nested stacks) is measured here on the app the
 * statement is about. The number is read from the doc
 * text, so changing the doc or the constructs without the other fails the test. (The alarm count and cost table of
 * docs/constructs.md is checked the same way by test/constructs/fleet-alarm-counts.test.ts.)
 */
const root = join(__dirname, '..', '..');
const docs: Record<string, string> = {};
function doc(file: string): string {
  docs[file] ??= readFileSync(join(root, file), 'utf8').replace(/\s+/g, ' ');
  return docs[file];
}

const WORDS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10 };
/** A number as the docs write it: a word (one to ten) or digits with thousands separators. */
function num(text: string): number {
  const t = text.toLowerCase();
  if (t in WORDS) return WORDS[t];
  if (!/^\d{1,3}(,\d{3})*$|^\d+$/.test(t)) throw new Error(`'${text}' is not a number the docs write`);
  return Number(t.replace(/,/g, ''));
}
const N = String.raw`(one|two|three|four|five|six|seven|eight|nine|ten|\d[\d,]*)`;

/** The numbers of the one statement of `file` that `pattern` matches (`#` in the pattern stands for a number). */
function stated(file: string, pattern: string): number[] {
  const re = new RegExp(pattern.replace(/#/g, N).replace(/ /g, String.raw`\s+`), 'gi');
  const matches = [...doc(file).matchAll(re)];
  if (matches.length !== 1) throw new Error(`${file}: expected one statement matching /${re.source}/, found ${matches.length}`);
  return matches[0].slice(1).filter((g) => g !== undefined && new RegExp(`^${N}$`, 'i').test(g)).map(num);
}

const count = (scope: IConstruct, type: string): number =>
  scope.node.findAll().filter((c) => CfnResource.isCfnResource(c) && c.cfnResourceType === type).length;
const FUNCTION = 'AWS::Lambda::Function';
const STATE_MACHINE = 'AWS::StepFunctions::StateMachine';
const ALARM = 'AWS::CloudWatch::Alarm';

function base(): { app: App; stack: Stack; connection: ServiceConnection; roles: NotificationPipelineRoles } {
  const app = new App();
  const stack = new Stack(app, 'MyStack', { env: { account: '123456789012', region: 'us-east-1' } });
  const connection = new ServiceConnection(stack, 'Dpi', {
    endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
    refreshToken: secretsmanager.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),
    journalTableName: 'dpi-lifecycle-journal',
  });
  const roles = new NotificationPipelineRoles(stack, 'Roles', { serviceAccountId: '111122223333' });
  return { app, stack, connection, roles };
}
const seller = (remoteIdentityId: number) => ({
  remoteIdentityId, accountType: AccountType.SELLER, notificationTypes: [NotificationType.REPORT_PROCESSING_FINISHED],
});
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
/** The most identities of `ids` in one of `nestedStacks` nested stacks. */
function largestNestedStack(ids: number[], nestedStacks: number): number {
  const load = new Array<number>(nestedStacks).fill(0);
  for (const id of ids) load[fleetBucketOf(id, nestedStacks)] += 1;
  return Math.max(...load);
}

/** A stack with pipelines and subscriptions (no history request), and the same with one. */
function providerStacks(): { plain: Stack; withHistory: Stack } {
  const make = (history: boolean): Stack => {
    const b = base();
    for (const id of [362, 363]) new NotificationPipeline(b.stack, `P${id}`, { connection: b.connection, roles: b.roles, ...seller(id) });
    const orders = new Subscription(b.stack, 'Orders', { connection: b.connection, productId: 3001, storageGroupId: 501, remoteIdentityId: 362 });
    new Subscription(b.stack, 'Ads', { connection: b.connection, productId: 3002, storageGroupId: 501, remoteIdentityId: 365 });
    if (history) new HistoryRequest(b.stack, 'Backfill', { connection: b.connection, subscription: orders, startDate: '2026-11-15', endDate: '2026-11-17' });
    return b.stack;
  };
  return { plain: make(false), withHistory: make(true) };
}

describe('functions per stack', () => {
  const { plain, withHistory } = providerStacks();

  test('README: one provider per stack, N deploy-time functions (M with a HistoryRequest)', () => {
    const [fns, waiters, withHistoryFns, withHistoryWaiters] = stated('README.md', 'One provider per stack, however many pipelines and subscriptions '
      + 'you declare: # deploy-time Lambda functions and # Step Functions waiter \\(# functions and # waiters when the stack has a `HistoryRequest`\\)');
    expect(count(plain, FUNCTION)).toBe(fns);
    expect(count(withHistory, FUNCTION)).toBe(withHistoryFns);
    expect(count(plain, STATE_MACHINE)).toBe(waiters);
    expect(count(withHistory, STATE_MACHINE)).toBe(withHistoryWaiters);
  });

  test('docs/handler.md: the handler\'s and the framework\'s functions, N more with a HistoryRequest; the example app\'s total', () => {
    const [fns] = stated('docs/handler.md', 'one Step Functions state machine, the waiter: # functions however many pipelines and subscriptions');
    const [more] = stated('docs/handler.md', 'adds a second provider with a waiter of its own \\(the history requests\' service token since they exist\\): # more framework functions');
    const [total, provider] = stated('docs/handler.md', 'The example app has # functions in all: those #, its consumer and the `SubscriptionMonitor`\'s');
    expect(count(plain, FUNCTION)).toBe(fns);
    expect(count(withHistory, FUNCTION) - count(plain, FUNCTION)).toBe(more);
    expect(provider).toBe(fns + more);
    const app = buildExampleApp();
    const stack = app.node.findChild('MarketplaceData') as Stack;
    expect(count(stack, FUNCTION)).toBe(total);
    expect(count(stack.node.findChild('DpiProvider'), FUNCTION)).toBe(provider);
    // Its consumer and the monitor's function are the others.
    expect(count(stack.node.findChild('OrderNotificationConsumer'), FUNCTION) + count(stack.node.findChild('DataMonitor'), FUNCTION)).toBe(total - provider);
  });

  test('docs/constructs.md: N functions, one state machine and M resources of the provider', () => {
    const [fns, handlerFns, frameworkFns, machines, resources] = stated('docs/constructs.md', 'The Lambda count does not grow with the number of '
      + 'pipelines or subscriptions: # functions \\(# of the handler, # of the framework\\) and # state machine, # resources in all');
    expect(count(plain, FUNCTION)).toBe(fns);
    expect(handlerFns + frameworkFns).toBe(fns);
    const provider = plain.node.findChild('DpiProvider');
    expect(count(plain, STATE_MACHINE)).toBe(machines);
    expect(provider.node.findAll().filter((c) => CfnResource.isCfnResource(c)).length).toBe(resources);
  });

  test('docs/constructs.md: one function per SubscriptionMonitor and per DriftMonitor', () => {
    const [monitorFns] = stated('docs/constructs.md', '# function per stack \\(a second `SubscriptionMonitor`');
    const [driftFns] = stated('docs/constructs.md', '# function per stack \\(a second `DriftMonitor`');
    const b = base();
    const before = count(b.stack, FUNCTION);
    new SubscriptionMonitor(b.stack, 'Monitor', { connection: b.connection });
    expect(count(b.stack, FUNCTION) - before).toBe(monitorFns);
    new DriftMonitor(b.stack, 'Drift', { connection: b.connection });
    expect(count(b.stack, FUNCTION) - before - monitorFns).toBe(driftFns);
  });
});

describe('SubscriptionMonitor alarms (docs/operations.md)', () => {
  test('N alarms per subscription and one on the function\'s own errors', () => {
    const [perSubscription, ownErrors] = stated('docs/operations.md', 'Each subscription gets # alarms \\(any record in ERROR, freshness over the threshold, the monitor failing twice\\), the function # on its own errors');
    const b = base();
    const monitor = new SubscriptionMonitor(b.stack, 'Monitor', { connection: b.connection });
    expect(count(b.stack, ALARM)).toBe(ownErrors);
    for (const id of [1, 2]) {
      monitor.addSubscription(new Subscription(b.stack, `S${id}`, { connection: b.connection, productId: 3001, storageGroupId: 501, remoteIdentityId: 362 }));
    }
    expect(count(b.stack, ALARM)).toBe(ownErrors + 2 * perSubscription);
  });
});

describe('resources per stack and per nested stack', () => {
  test('docs/fleets.md and docs/constructs.md: at most N pipelines in a stack with the provider and the roles; the message past it', () => {
    const [fit] = stated('docs/fleets.md', 'One stack holds at most # `NotificationPipeline`s next to the provider and the roles');
    const [fitConstructs] = stated('docs/constructs.md', 'With the provider and the roles, # pipelines fit in one stack');
    const [resources, limit, pipelines, pipelineResources, others, fitMessage] = stated('docs/fleets.md',
      'MyStack: the stack has # resources, more than CloudFormation\'s limit of #, with # NotificationPipelines \\(# resources\\) and # other resources: at most # pipelines fit in this stack');
    expect(fitConstructs).toBe(fit);
    expect(fitMessage).toBe(fit);
    expect(pipelines).toBe(fit + 1);
    expect(pipelineResources).toBe(pipelines);
    expect(resources).toBe(pipelineResources + others);
    const synth = (n: number): App => {
      const b = base();
      for (const id of range(1, n)) new NotificationPipeline(b.stack, `P${id}`, { connection: b.connection, roles: b.roles, ...seller(id) });
      b.app.synth();
      return b.app;
    };
    const app = synth(fit);
    const template = Template.fromStack(app.node.findChild('MyStack') as Stack).toJSON();
    expect(Object.keys(template.Resources).length).toBe(fit + others);
    expect(Object.keys(template.Resources).length).toBeLessThanOrEqual(limit);
    expect(() => synth(fit + 1)).toThrow(`MyStack: the stack has ${resources} resources, more than CloudFormation's limit of ${limit}, `
      + `with ${pipelines} NotificationPipelines (${pipelineResources} resources) and ${others} other resources: at most ${fit} pipelines fit in this stack`);
  }, 120_000);

  test('docs/fleets.md and docs/constructs.md: a pipeline costs one resource in its nested stack, N more with addAlarms()', () => {
    const [one, alarmsMore] = stated('docs/fleets.md', 'A pipeline costs # resource in its nested stack \\(`addAlarms\\(\\)` # more\\)');
    const [oneConstructs, withAlarms] = stated('docs/constructs.md', 'what one pipeline costs there: # resource, # with `addAlarms\\(\\)`');
    expect(oneConstructs).toBe(one);
    expect(withAlarms).toBe(one + alarmsMore);
    const b = base();
    const fleet = new NotificationPipelineFleet(b.stack, 'Fleet', { connection: b.connection, roles: b.roles, identities: [seller(1), seller(2)] });
    const resourcesOf = (s: NestedStack): number => s.node.findAll().filter((c) => CfnResource.isCfnResource(c) && Stack.of(c) === s).length;
    const [a, c] = [fleet.pipelineFor(1), fleet.pipelineFor(2)];
    const stackA = Stack.of(a) as NestedStack;
    const before = resourcesOf(stackA);
    // Each nested stack holds its pipelines and nothing else.
    expect(fleet.nestedStacks.reduce((sum, s) => sum + resourcesOf(s), 0)).toBe(2 * one);
    a.addAlarms();
    expect(resourcesOf(stackA) - before).toBe(alarmsMore);
    expect(c.node.findAll().filter((x) => CfnResource.isCfnResource(x) && x.cfnResourceType === ALARM)).toHaveLength(0);
  });

  test('docs/fleets.md: N nested stacks by default; room for about 4,000 pipelines without alarms', () => {
    const [nested] = stated('docs/fleets.md', 'Each identity goes to one of `nestedStackCount` nested stacks \\(default #\\)');
    const [defaultAgain, room] = stated('docs/fleets.md', 'The default of # leaves room for about # pipelines without alarms');
    expect(defaultAgain).toBe(nested);
    const b = base();
    const fleet = new NotificationPipelineFleet(b.stack, 'Fleet', { connection: b.connection, roles: b.roles, identities: range(1, 300).map(seller) });
    expect(fleet.nestedStackCount).toBe(nested);
    expect(fleet.nestedStacks).toHaveLength(nested);
    // One resource per pipeline and nothing else in a nested stack: the largest one stays under 500 resources.
    expect(largestNestedStack(range(1, room), nested)).toBeLessThanOrEqual(500);
    expect(largestNestedStack(range(100_000, 100_000 + room - 1), nested)).toBeLessThanOrEqual(500);
  });

  test('docs/constructs.md: 2,000 identities put at most about N resources in a nested stack (the bench\'s IDs)', () => {
    const [identities, most] = stated('docs/constructs.md', 'With the default 16 nested stacks and one resource per pipeline, # identities put at most about # resources in a nested stack');
    // bench/growth.ts declares identities 100000 and up.
    const largest = largestNestedStack(range(100_000, 100_000 + identities - 1), 16);
    expect(largest).toBeLessThanOrEqual(most);
    expect(largest).toBeGreaterThan(most * 0.95);
  });

  test('docs/constructs.md: per-identity alarms on 2,000 identities (IDs 1 to 2,000): the largest nested stack, and how many pipelines fit', () => {
    const [perPipeline, nested, identities, from, to, pipelines, resources, limit, fit] = stated('docs/constructs.md',
      'Per-identity alarms add # resources per pipeline to its nested stack: with the default # nested stacks, # identities \\(IDs # to #\\) put # pipelines, # resources, in the largest nested stack, a synth error \\(limit #\\): raise `nestedStackCount` \\(at most # pipelines per nested stack');
    expect(to - from + 1).toBe(identities);
    const largest = largestNestedStack(range(from, to), nested);
    expect(largest).toBe(pipelines);
    expect(pipelines * (1 + perPipeline)).toBe(resources);
    expect(resources).toBeGreaterThan(limit);
    expect(fit).toBe(Math.floor(limit / (1 + perPipeline)));
  });
});

describe('fleet alarms and functions (docs/fleets.md)', () => {
  test('N alarms for the whole fleet; perIdentity adds three per pipeline (300 identities)', () => {
    const [fleetAlarms] = stated('docs/fleets.md', '`sellers.addAlarms\\(\\{ alarmTopic, dashboard \\}\\)` adds # alarms for the whole fleet');
    const [perPipeline, alarms300, identities300, alarms2000, identities2000] = stated('docs/fleets.md',
      '`perIdentity: true` adds each pipeline\'s own # alarms \\(# alarms for # identities, # for #\\)');
    const [fleetAlarmsConstructs] = stated('docs/constructs.md', 'fleet.addAlarms\\(\\{ alarmTopic: alerts, dashboard \\}\\); // # alarms whatever the fleet size');
    const [upTo] = stated('docs/constructs.md', 'also calls every pipeline\'s `addAlarms\\(\\)` \\(up to # alarms per identity');
    expect(fleetAlarmsConstructs).toBe(fleetAlarms);
    expect(upTo).toBe(perPipeline);
    expect(alarms300).toBe(fleetAlarms + perPipeline * identities300);
    expect(alarms2000).toBe(fleetAlarms + perPipeline * identities2000);
    for (const perIdentity of [false, true]) {
      const b = base();
      const fleet = new NotificationPipelineFleet(b.stack, 'Fleet', { connection: b.connection, roles: b.roles, identities: range(1, identities300).map(seller) });
      fleet.addAlarms({ perIdentity });
      expect(count(b.app, ALARM)).toBe(perIdentity ? alarms300 : fleetAlarms);
    }
  });

  test('a fleet of 2,000 has the same N Lambda functions as a stack with one pipeline', () => {
    const [identities, fns] = stated('docs/fleets.md', 'a fleet of # has the same # Lambda functions as a stack with one pipeline');
    const one = base();
    new NotificationPipeline(one.stack, 'P', { connection: one.connection, roles: one.roles, ...seller(1) });
    expect(count(one.app, FUNCTION)).toBe(fns);
    // The construct tree, not templates (the alarm counts of 2,000: test/constructs/fleet-alarm-counts.test.ts).
    const b = base();
    const fleet = new NotificationPipelineFleet(b.stack, 'Fleet', { connection: b.connection, roles: b.roles, identities: range(1, identities).map(seller) });
    expect(fleet.pipelines).toHaveLength(identities);
    expect(count(b.app, FUNCTION)).toBe(fns);
  }, 120_000);
});
