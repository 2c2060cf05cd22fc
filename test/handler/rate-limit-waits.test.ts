import { HandlerHarness } from './helpers';
import { dynamoJournal } from '../../src/handler/journal';
import { DEADLINE_MARGIN_MS } from '../../src/handler/runtime';
import { ResourceTypes } from '../../src/kinds';

/**
 * The handler's rate-limit waits: one `rate limited` log entry per wait (the local runner turns it into a stderr
 * line), and a wait that would not end before the Lambda's remaining time minus the margin fails the event with a
 * clear reason instead of running into the Lambda's timeout. The fake sleep moves the emulator clock.
 */
const PROPS = { ProductId: '3001', RemoteIdentityId: '362', ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' }, Status: 'active', OnDelete: 'invalid' };

function waitEntries(h: HandlerHarness): Array<Record<string, unknown>> {
  return h.logs.map((l) => { try { return JSON.parse(l) as Record<string, unknown>; } catch { return {}; } })
    .filter((e) => e.msg === 'rate limited');
}

describe('handler waits for the rate limit', () => {
  let h: HandlerHarness;
  afterEach(async () => {
    h.assertNoSecrets();
    await h.stop();
  });

  test('one "rate limited" log entry per wait, with exactly method, path, waitMs and refusals', async () => {
    h = await HandlerHarness.start({ rateLimit: { requests: 4, seconds: 10 } });
    h.onSleep = async (ms) => { await h.admin('POST', '/clock', { advance: Math.ceil(ms / 1000) }); };
    // The steady state: the journal knows the service narrows its lists (no learning lists, which wait for no 429 longer
    // than their 30 s).
    await dynamoJournal({ create: true, table: h.journalTable, endpoint: h.journal.endpoint, sleep: async () => undefined })
      .setFact('sub#3001', `narrows#${h.emu.url}`, 'yes');
    const r = await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Create', PROPS));
    await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Delete', PROPS, { PhysicalResourceId: r.PhysicalResourceId }));
    const limited = (await h.requests()).filter((x) => x.status === 429);
    const entries = waitEntries(h);
    expect(limited.length).toBeGreaterThan(0);
    // The handler's calls are sequential: every 429 starts a wait of its own.
    expect(entries).toHaveLength(limited.length);
    for (const e of entries) {
      expect(Object.keys(e).sort()).toEqual(['method', 'msg', 'path', 'refusals', 'time', 'waitMs']);
      expect(typeof e.method).toBe('string');
      expect(e.path).toMatch(/^\//);
      expect(e.refusals).toBeGreaterThanOrEqual(1);
      expect(e.waitMs).toBeGreaterThanOrEqual(1000);
      expect(h.slept).toContain(e.waitMs);
    }
    expect(entries.map((e) => `${e.method} ${e.path}`)).toEqual(limited.map((x) => `${x.method} ${x.path}`));
  });

  test('a wait that does not fit before the deadline fails the event at once with a reason naming the rate limit', async () => {
    // Two requests per 5 minutes: the emulator answers Retry-After 60 (its cap) until the window rolls.
    h = await HandlerHarness.start({ rateLimit: { requests: 2, seconds: 300 } });
    h.onSleep = async (ms) => { await h.admin('POST', '/clock', { advance: Math.ceil(ms / 1000) }); };
    const remainingMs = 100_000;
    let reason: string | undefined;
    try {
      // A product without a remote identity: one call meets the limit (the harness's sleeps advance the service's
      // clock, not the deadline's, so a second call's wait would seem to fit).
      await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Create', { ProductId: '4001', Status: 'active', OnDelete: 'invalid' }), remainingMs);
    } catch (e) {
      reason = (e as Error).message;
    }
    expect(reason).toBeDefined();
    // The first wait (60 s, up to +15%) fits in 100 s - 15 s; the second (120 s doubled) does not: no sleep for it.
    expect(reason).toMatch(/deadline reached after \d+ attempt\(s\) while waiting out the service's rate limit \(refused with 429 2 time\(s\); the next wait of 1\d\d s would pass it\); last status 429: Rate limit exceeded/);
    const entries = waitEntries(h);
    expect(entries.map((e) => e.refusals)).toEqual([1]);
    const waited = h.slept.filter((ms) => ms >= 1000).reduce((a, b) => a + b, 0);
    expect(waited).toBeLessThan(remainingMs - DEADLINE_MARGIN_MS);
    expect(waited).toBeGreaterThanOrEqual(60_000);
  });
});
