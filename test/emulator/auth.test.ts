import { createHmac } from 'node:crypto';
import { Harness, useHarness } from './helpers';
import { DEFAULT_REFRESH_TOKEN } from '../../src/emulator';

let h: Harness;
useHarness((started) => {
  h = started;
}, { tokenTtlSeconds: 100 });

function claims(jwt: string): any {
  return JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8'));
}

describe('auth', () => {
  test('exchange returns an HS256 JWT with account, user, iat, exp', async () => {
    const r = await h.raw('POST', '/auth/api/ref', { data: { type: 'APIAuth', attributes: { refresh_token: DEFAULT_REFRESH_TOKEN } } });
    expect(r.status).toBe(200);
    expect(r.body.data.type).toBe('APIAuth');
    const jwt = r.body.data.attributes.token as string;
    const head = JSON.parse(Buffer.from(jwt.split('.')[0], 'base64url').toString('utf8'));
    expect(head.alg).toBe('HS256');
    const c = claims(jwt);
    expect(c).toMatchObject({ account: 1001, user: 2001 });
    expect(c.exp - c.iat).toBe(100);
    const now = (await h.admin('GET', '/clock')).body.now;
    expect(Math.abs(c.iat - now)).toBeLessThanOrEqual(1);
  });

  test('the second default account has its own token', () => {
    expect(claims(h.otherToken)).toMatchObject({ account: 1002, user: 2002 });
  });

  test('unknown refresh token -> 401, missing -> 400, and the token is never echoed', async () => {
    const r = await h.raw('POST', '/auth/api/ref', { data: { attributes: { refresh_token: 'nope-secret-value' } } });
    expect(r.status).toBe(401);
    expect(JSON.stringify(r.body)).not.toContain('nope-secret-value');
    expect((await h.raw('POST', '/auth/api/ref', { data: { attributes: {} } })).status).toBe(400);
  });

  test('missing, malformed, badly signed and expired bearer tokens -> 401', async () => {
    expect((await h.raw('GET', '/account')).status).toBe(401);
    expect((await h.raw('GET', '/account', undefined, { authorization: 'Basic abc' })).status).toBe(401);
    expect((await h.raw('GET', '/account', undefined, { authorization: 'Bearer not.a.jwt!' })).status).toBe(401);
    const [head, body] = h.token.split('.');
    const forged = `${head}.${body}.${createHmac('sha256', 'wrong').update(`${head}.${body}`).digest('base64url')}`;
    const bad = await h.raw('GET', '/account', undefined, { authorization: `Bearer ${forged}` });
    expect(bad.status).toBe(401);
    expect(JSON.stringify(bad.body)).not.toContain(forged);
    const fresh = await h.exchange(DEFAULT_REFRESH_TOKEN);
    expect((await h.api('GET', '/account', undefined, fresh)).status).toBe(200);
    await h.admin('POST', '/clock', { advance: 101 });
    const expired = await h.api('GET', '/account', undefined, fresh);
    expect(expired.status).toBe(401);
    expect(expired.body.errors[0].detail).toMatch(/expired/);
  });

  test('the token decides the account', async () => {
    const t = await h.exchange(DEFAULT_REFRESH_TOKEN);
    const o = await h.exchange('emulator-refresh-token-other');
    expect((await h.api('GET', '/account', undefined, t)).body.data.id).toBe('1001');
    expect((await h.api('GET', '/account', undefined, o)).body.data.id).toBe('1002');
    expect((await h.api('GET', '/user', undefined, o)).body.data[0].id).toBe('2002');
  });

  test('admin routes need no token', async () => {
    expect((await h.admin('GET', '/state')).status).toBe(200);
  });
});
