/**
 * What the creates-lock and narrowing tests share: the handler harness (reset for each test), the handler's clock
 * moved forward at once (`advance`), the journal, the lock items, a client that ignores the identity filter, and the
 * emulator's creates that teach "yes".
 */
import { HandlerHarness, useHandlerHarness } from './helpers';
import { DpiClient, Subscription } from '../../src/client';
import { DEFAULT_CLOUD_ACCOUNT } from '../../src/emulator';
import { createRecordedSubscription } from '../../src/handler/creates';
import { dynamoJournal, Journal } from '../../src/handler/journal';
import { NO_IDENTITY, WITNESS_AGE_MS } from '../../src/handler/narrowing';
import { Runtime } from '../../src/handler/runtime';
import { ResourceTypes } from '../../src/kinds';

export const SUB = ResourceTypes.SUBSCRIPTION;
export const ORDERS = {
  ProductId: '3001', RemoteIdentityId: '362', ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' }, Status: 'active', OnDelete: 'invalid',
};
/** The attributes of a create of identity 364 (createRecordedSubscription). */
export const ATTRS = { account: 1001, user: 2001, product: 3001, remote_identity: 364, date_start: '2026-11-29T00:00:00Z' };
export const STALE = '2000-01-01T00:00:00.000Z';
export const WAITING = 'another create of the product is in flight';

let h: HandlerHarness;
/** The wall clock as the handler reads it (`Date.now`), moved forward by `advance` (a minute passes at once). */
const realNow = Date.now.bind(Date);
let offset = 0;
export const advance = (ms: number): void => {
  offset += ms;
};

/** Starts the harness for the test file (reset for each test, the clock not moved); `set` receives it. */
export function useCreatesLockHarness(set: (h: HandlerHarness) => void): void {
  useHandlerHarness((started) => {
    h = started;
    set(started);
  }, { resetEach: true });
  beforeEach(() => {
    h.configure();
    h.callerAccount = DEFAULT_CLOUD_ACCOUNT;
    offset = 0;
    jest.spyOn(Date, 'now').mockImplementation(() => realNow() + offset);
  });
  afterEach(() => jest.restoreAllMocks());
}

export const journal = (): Journal =>
  dynamoJournal({ create: true, table: h.journalTable, endpoint: h.journal.endpoint, sleep: async () => undefined });
export const subOf = (id: string): any => h.state().subscriptions.find((s: any) => String(s.id) === id);
export const lockItems = async (): Promise<string[]> => (await h.journalItems())
  .filter((i) => i.pk.startsWith('inflight#') && i.sk.startsWith('lock')).map((i) => `${i.pk} ${i.sk}`).sort();

/** A client whose `GET /v2/sub` answers every subscription of the product, whatever `remote_identity` asks for. */
export function ignoringFilter(subs: Subscription[], createdBy: { create: () => Promise<Subscription> }, filters: boolean): DpiClient {
  return {
    subscriptions: {
      list: async (q: { product?: number | string; remoteIdentity?: number | string } = {}) => subs
        .filter((s) => !filters || q.remoteIdentity === undefined || String(s.remote_identity) === String(q.remoteIdentity))
        .map((s) => (filters ? s : { id: s.id, status: s.status })),
      create: async () => createdBy.create(),
      get: async (id: string) => ({ id, status: 'active' }),
    },
    withDeadline() {
      return this;
    },
  } as unknown as DpiClient;
}

/**
 * The emulator's creates teach "yes": a first observation (identity 362), then, a minute after a container first read
 * it, a create of another identity (364) in that container.
 */
export async function learnYes(j: Journal): Promise<void> {
  const fact = `narrows#${h.emu.url}`;
  await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
  const seen = await j.fact('sub#3001', fact);
  expect(seen).toMatch(/^seen:\d+:362:\d+$/);
  // A new container reads the observation: it judges it only a minute later by its own clock, and lists nothing now.
  h.configure();
  await h.clearRequests();
  await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up-2', RemoteIdentityId: '364', ProductParameters: { marketplace_id: 'A1AM78C64UM0Y8' } },
    { LogicalResourceId: 'WarmUp2' }));
  expect(await j.fact('sub#3001', fact)).toBe(seen);
  expect((await h.requests()).filter((r) => r.method === 'GET' && r.path === '/v2/sub' && r.query.remote_identity === NO_IDENTITY)).toHaveLength(0);
  // A minute later, the same container's next create of 364: the lists of 364, 0 and 362 teach "yes".
  advance(WITNESS_AGE_MS);
  await h.clearRequests();
  await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up-3', RemoteIdentityId: '364', ProductParameters: { marketplace_id: 'A2EUQ1WTGCTBG2' } },
    { LogicalResourceId: 'WarmUp3' }));
  expect((await h.requests()).filter((r) => r.method === 'GET' && r.path === '/v2/sub').map((r) => r.query.remote_identity)).toEqual(['364', '364', '0', '362']);
  expect(await j.fact('sub#3001', fact)).toBe('yes');
}

/** A service client of the subscriptions' `list` and `create` only (learning's lists are given their own deadline). */
export function stubClient(subscriptions: {
  list: (q?: { remoteIdentity?: string }) => Promise<Subscription[]>;
  create: () => Promise<Subscription>;
  get?: (id: string) => Promise<Subscription>;
}): DpiClient {
  return {
    // By default every subscription read by its ID is active (the witness of an observation still there).
    subscriptions: { get: async (id: string) => ({ id, status: 'active' }), ...subscriptions },
    withDeadline() {
      return this;
    },
  } as unknown as DpiClient;
}

/** A runtime of `client` at `origin` with the journal `j` (no waits, ten minutes to the deadline). */
export function stubRuntime(client: DpiClient, j: Journal, origin: string, extra: Partial<Runtime> = {}): Runtime {
  return { client, journal: j, deadline: Date.now() + 600_000, sleep: async () => undefined, serviceOrigin: origin, ...extra } as unknown as Runtime;
}

/** A create of a product-3001 subscription of `identity` by resource `key` (a new record), as createRecordedSubscription runs it. */
export async function createAs(rt: Runtime, j: Journal, key: string, identity: string): Promise<string | undefined> {
  const rec = await j.create<any>(key, 'new', { product: 3001, identity });
  return (await createRecordedSubscription(rt, rec, { ...ATTRS, remote_identity: Number(identity) }, 'abandoned', () => true)).physicalId;
}
