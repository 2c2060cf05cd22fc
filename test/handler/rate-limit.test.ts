import { HandlerHarness } from './helpers';
import { dynamoJournal } from '../../src/handler/journal';
import { ResourceTypes } from '../../src/kinds';

/**
 * The service's rate limit (scaled down: 4 requests per 10 s of the emulator clock): the handler's client honours
 * Retry-After within the Lambda's remaining time and the lifecycle completes; the fake sleep moves the clock.
 */
describe('under the service rate limit', () => {
  let h: HandlerHarness;
  beforeAll(async () => {
    h = await HandlerHarness.start({ rateLimit: { requests: 4, seconds: 10 } });
    h.onSleep = async (ms) => {
      await h.admin('POST', '/clock', { advance: Math.ceil(ms / 1000) });
    };
  });
  afterAll(async () => {
    await h.stop();
  });

  const props = { ProductId: '3001', RemoteIdentityId: '362', ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' }, Status: 'active', OnDelete: 'invalid' };

  test('a subscription Create and Delete complete; every 429 was waited out for its Retry-After', async () => {
    // The steady state: the journal knows the service narrows its lists (no learning lists after the create).
    await dynamoJournal({ create: true, table: h.journalTable, endpoint: h.journal.endpoint, sleep: async () => undefined })
      .setFact('sub#3001', `narrows#${h.emu.url}`, 'yes');
    h.configure();
    await h.clearRequests();
    h.slept.length = 0;
    const r = await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Create', props));
    await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Delete', props, { PhysicalResourceId: r.PhysicalResourceId }));
    const reqs = await h.requests();
    const limited = reqs.filter((x) => x.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(h.slept.filter((ms) => ms >= 1000).length).toBeGreaterThanOrEqual(limited.length);
    expect(h.state().subscriptions.find((s: any) => String(s.id) === r.PhysicalResourceId).status).toBe('invalid');
  });
});
