import { DpiClient, endpointsFromBase } from '../../src/client';

/**
 * Rate-limit cooperation: a 429 with Retry-After pauses every request of a client and its `withDeadline` copies
 * (the handler's concurrent invocations share one), so requests started during the pause are not sent until it ends.
 */
describe('the shared rate-limit pause', () => {
  const ACCOUNT = { data: { type: 'Account', id: '1001', attributes: { name: 'acme' } } };
  const TOKEN = 'x.eyJleHAiOjQxMDI0NDQ4MDB9.y';

  test('one 429 pauses every copy of the client once; nothing is sent during the pause', async () => {
    const sent: string[] = [];
    let refuseNext = false;
    const fetchFake = async (input: string | URL | Request): Promise<Response> => {
      const url = new URL(String(input));
      sent.push(url.pathname);
      if (url.pathname === '/auth/api/ref') return Response.json({ data: { type: 'APIAuth', attributes: { token: TOKEN } } });
      if (refuseNext) {
        refuseNext = false;
        return new Response(JSON.stringify({ errors: [{ status: '429', detail: 'Rate limit exceeded' }] }), { status: 429, headers: { 'retry-after': '2' } });
      }
      return Response.json(ACCOUNT);
    };
    const sleeps: number[] = [];
    let endPause: () => void = () => undefined;
    const sleep = (ms: number): Promise<void> => {
      sleeps.push(ms);
      return new Promise((resolve) => { endPause = resolve; });
    };
    const c = new DpiClient({ endpoints: endpointsFromBase('http://127.0.0.1:9'), refreshToken: 'rt', fetch: fetchFake as typeof fetch, sleep, random: () => 0.5 });
    await c.account.get();
    expect(sent).toEqual(['/auth/api/ref', '/account']);

    refuseNext = true;
    const first = c.account.get();
    for (let i = 0; i < 20 && sleeps.length === 0; i++) await new Promise((r) => setImmediate(r));
    expect(sleeps).toEqual([2000]);
    // Four more requests on copies of the client (as concurrent handler invocations make them) during the pause.
    const others = [1, 2, 3, 4].map(() => c.withDeadline(Date.now() + 600_000).account.get());
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(sent).toEqual(['/auth/api/ref', '/account', '/account']);

    endPause();
    const results = await Promise.all([first, ...others]);
    expect(results.map((a) => a.id)).toEqual(Array(5).fill('1001'));
    // One pause for all of them, and each request sent once after it.
    expect(sleeps).toEqual([2000]);
    expect(sent.filter((p) => p === '/account').length).toBe(2 + 5);
  });
});
