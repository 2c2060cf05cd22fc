import { HandlerHarness, useHandlerHarness } from './helpers';
import { expectAgreement, planAndRun, Ran, Step } from './plan-helpers';
import { readJournalHints } from '../../src/cli/commands/plan-journal';
import { dynamoJournal } from '../../src/handler/journal';
import { planResource, PlanJournalHint } from '../../src/handler/plan';
import { ResourceTypes } from '../../src/kinds';

// The review's plan-vs-handler findings, asserted against what the handler then does (emulator request log, journal).
const T = ResourceTypes.SUBSCRIPTION;
const BASE = {
  ProductId: '3001',
  RemoteIdentityId: '362',
  StorageGroupId: '501',
  ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' },
  Status: 'active',
  Name: 'Orders',
  OnDelete: 'invalid',
  RemovalPolicy: 'destroy',
};

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

/** What `dpi plan` reads of the journal for the harness's resource (`HandlerTest/Resource`), with the CLI's reader. */
async function hintOf(physicalId: string, key = 'HandlerTest/Resource'): Promise<PlanJournalHint> {
  const journal = dynamoJournal({ create: true, table: h.journalTable, endpoint: h.journal.endpoint, sleep: async () => undefined });
  const read = await readJournalHints([{ ref: 'r', table: h.journalTable, key, physicalId }],
    async () => ({ journal, close: async () => undefined }));
  if ('error' in read) throw new Error(read.error);
  return read.hints.get('r')!;
}

/** `planAndRun` with the plan made (before the run) from what the journal records, as `dpi plan` does once it read it. */
async function planWithJournalAndRun(physicalId: string, step: Step, journal: PlanJournalHint): Promise<Ran> {
  const plan = planResource({ type: T, stack: 'HandlerTest', logicalId: 'Resource', physicalId, ...step, journal });
  return { ...await planAndRun(h, T, physicalId, step), plan };
}

describe('plan vs handler (review of issue 23)', () => {
  test('adopted earlier, adoption dropped, then removed: with the journal read the plan says retain, and the handler releases it', async () => {
    const other = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
    const adopted = { ...BASE, Name: 'Adopted', AdoptId: other, RemovalPolicy: 'retain' };
    await h.onEvent(h.event(T, 'Create', adopted));
    const dropped = { ...BASE, Name: 'Adopted', RemovalPolicy: 'destroy' };
    await h.onEvent(h.event(T, 'Update', dropped, { PhysicalResourceId: other, OldResourceProperties: { Connection: h.connection, ...adopted } }));
    const journal = await hintOf(other);
    expect(journal.adopted).toBe(true);
    const r = await planWithJournalAndRun(other, { oldProps: dropped }, journal);
    expect(r.plan.action).toBe('retain');
    expectAgreement(r);
    expect(h.state().subscriptions.find((s: { id: unknown }) => String(s.id) === other)?.status).toBe('active');
  });

  test('a revert of an added product parameter: with the journal the plan agrees with the handler (it keeps the parameter)', async () => {
    const id = (await h.onEvent(h.event(T, 'Create', BASE))).PhysicalResourceId;
    const added = { ...BASE, ProductParameters: { ...BASE.ProductParameters, report_window: '7' } };
    await h.onEvent(h.event(T, 'Update', added, { PhysicalResourceId: id, OldResourceProperties: { Connection: h.connection, ...BASE } }));
    const journal = await hintOf(id);
    const r = await planWithJournalAndRun(id, { oldProps: added, newProps: BASE }, journal);
    expect(r.plan.failure).toBeUndefined();
    expectAgreement(r);
    expect(r.failure).toBeUndefined();
    // Without the journal the plan stays on the safe side (a failure) and says when it would not be one.
    const unread = await planAndRun(h, T, id, { oldProps: added, newProps: BASE });
    expect(unread.plan.failure).toContain('report_window');
    expect(unread.plan.effects.join(' ')).toContain('unless the last deployed change added them');
  });

  test('ending a subscription lists the history-cancel PATCH as a conditional call, and the handler sends it for an open request', async () => {
    const id = (await h.onEvent(h.event(T, 'Create', BASE))).PhysicalResourceId;
    const hist = (await h.onEvent(h.event(ResourceTypes.HISTORY_REQUEST, 'Create',
      { SubscriptionId: id, StartDate: '2026-01-01', EndDate: '2026-01-02' }, { LogicalResourceId: 'Hist' }))).PhysicalResourceId;
    const r = await planAndRun(h, T, id, { oldProps: BASE });
    const cancel = r.plan.calls.find((c) => c.path.includes('/history/'));
    expect(cancel).toMatchObject({ method: 'PATCH', when: 'for each open history request' });
    expect(r.sent).toContain(`PATCH /service/history/production/history/${hist}`);
    expectAgreement(r, { history: hist });
  });

  test('a changed JournalKey: the plan says the handler refuses it (managed by the old key), and it does', async () => {
    // A journal key names the resource's own stack (src/handler/binding.ts).
    const keyed = { ...BASE, JournalKey: 'HandlerTest/one' };
    const id = (await h.onEvent(h.event(T, 'Create', keyed))).PhysicalResourceId;
    const r = await planAndRun(h, T, id, { oldProps: keyed, newProps: { ...keyed, JournalKey: 'HandlerTest/two', Name: 'Renamed' } });
    expect(r.plan.failure).toContain('is managed by HandlerTest/one');
    expect(r.plan.calls).toEqual([]);
    expectAgreement(r);
  });
});
