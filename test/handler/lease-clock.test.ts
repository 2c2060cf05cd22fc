/**
 * The handler's clock (LocalRuntime.now) against the times the handler writes. The lease's `requestSince` and the
 * journal's record IDs are compared to tell what a cancelled Create made (src/handler/lease.ts, `madeSince`), so both
 * must come from the same clock. Where the handler's clock is not the wall clock (the test harness's `h.clock`, which
 * moves with the handler's waits; the local runner's `waits: 'emulator-clock'`), a wait before the Create took its
 * lease put the lease ahead of the record IDs: neither the Create (`undoIfCancelled`) nor the cancellation Delete
 * (`madeByCancelledCreate`) found the subscription it made, which stayed active. Here the Create's first wait is
 * forced: its new journal table stays CREATING for a moment (ensureTable waits for it), as it does now and then under
 * load (lease-faults.test.ts 5a failed so once).
 */
import { delay, Deliveries, INVENTED, SUB_PROPS } from './delivery-helpers';
import { HandlerHarness } from './helpers';
import { ResourceTypes } from '../../src/kinds';

jest.setTimeout(90_000);

const SUB = ResourceTypes.SUBSCRIPTION;

let h: HandlerHarness;
beforeAll(async () => {
  // Each test's new journal table stays CREATING for 1 s: the first invocation waits for it (1 s per round on the
  // handler's clock, 20 ms of real time) before it takes its lease.
  h = await HandlerHarness.start({ journal: { createTableMs: 1_000 } });
});
afterAll(async () => {
  h.assertNoSecrets();
  await h.stop();
});
beforeEach(async () => {
  await h.reset();
  deliveries.outside.clear();
  // The handler's clock moves with its sleeps (as in lease-faults.test.ts 5a): its waits take little real time.
  h.clock = Date.now();
  h.onSleep = () => delay(20);
});
afterEach(() => {
  h.onSleep = undefined;
});

const deliveries = new Deliveries(() => h);

/** The handler-clock time the table wait took before the Create's lease: the premise of each test. */
function waitedBeforeLease(sleptBefore: number): number {
  return h.slept.slice(sleptBefore).reduce((a, b) => a + b, 0);
}

test('a Create that waited for its new journal table, cancelled while its POST is on the wire: it ends what it made; the retry Delete finds nothing left', async () => {
  const other = await deliveries.bystander();
  const sleptBefore = h.slept.length;
  let waited = 0;
  const [create, first] = await deliveries.race('while its request is on the wire', 'POST', '/v2/sub', () => h.onEvent(h.event(SUB, 'Create', SUB_PROPS)), async () => {
    waited = waitedBeforeLease(sleptBefore);
    await h.clearRequests();
    // remaining 76 s: it stops waiting for the lease 60 s before its deadline (lease-faults.test.ts 5a).
    return h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }), 76_000);
  }, 'the second settles');
  expect(waited).toBeGreaterThanOrEqual(1_000);
  expect(first.status === 'rejected' ? String(first.reason) : 'fulfilled').toMatch(/still running.*retry then \(nothing was changed\)/);
  // The Create saw the Delete's mark after its POST and ended the subscription it made.
  expect(create.status === 'rejected' ? String(create.reason) : 'fulfilled').toMatch(/CloudFormation stopped waiting for this request.*was ended again/);
  await h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }));
  expect(deliveries.activeMade()).toEqual([]);
  expect(await deliveries.liveRecords()).toEqual([]);
  deliveries.unchanged(other);
});

test('a Create that waited for its new journal table answered, CloudFormation had stopped waiting: the cancellation Delete ends what it made', async () => {
  const other = await deliveries.bystander();
  const sleptBefore = h.slept.length;
  const made = await h.onEvent(h.event(SUB, 'Create', SUB_PROPS)); // its answer lost to CloudFormation
  expect(waitedBeforeLease(sleptBefore)).toBeGreaterThanOrEqual(1_000);
  expect(deliveries.subOf(made.PhysicalResourceId).status).toBe('active');
  await h.onEvent(h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED }));
  expect(deliveries.subOf(made.PhysicalResourceId).status).toBe('invalid');
  expect(deliveries.activeMade()).toEqual([]);
  expect(await deliveries.liveRecords()).toEqual([]);
  deliveries.unchanged(other);
});
