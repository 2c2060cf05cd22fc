import { Harness, useHarness } from './helpers';

let h: Harness;
useHarness((started) => {
  h = started;
});

const CREDS = {
  client_id: 'amzn1.application-oa2-client.emulator', client_secret: 'emulator-client-secret', region: 'na', refresh_token: 'Atzr|emulator-sp-refresh-token',
};
const svc = (attributes: Record<string, unknown>) => ({ data: { type: 'Service', attributes } });

describe('marketplaces', () => {
  test('seller and vendor identities list their marketplaces', async () => {
    const r = await h.api('GET', '/service/sp/marketplaces/362');
    expect(r.status).toBe(200);
    expect(r.body.map((m: any) => m.id)).toEqual(['ATVPDKIKX0DER', 'A2EUQ1WTGCTBG2']);
    expect(r.body[0]).toEqual({
      id: 'ATVPDKIKX0DER', name: 'Amazon.com', countryCode: 'US', defaultCurrencyCode: 'USD', defaultLanguageCode: 'en_US', domainName: 'www.amazon.com',
    });
    expect((await h.api('GET', '/service/sp/marketplaces/363')).body).toHaveLength(1);
  });
  test('other identity types -> 400; unknown 404; another account 403', async () => {
    expect((await h.api('GET', '/service/sp/marketplaces/365')).status).toBe(400);
    expect((await h.api('GET', '/service/sp/marketplaces/999')).status).toBe(404);
    expect((await h.api('GET', '/service/sp/marketplaces/372')).status).toBe(403);
  });
});

describe('private application credentials', () => {
  test('sp-id resolves the selling partner ID', async () => {
    const r = await h.api('POST', '/service/sp/sp-id', svc(CREDS));
    expect(r.status).toBe(200);
    expect(r.body).toEqual([{ type: 'Service', attributes: { selling_partner_id: 'A3EMULATORSELLER' } }]);
  });
  test.each(['client_id', 'client_secret', 'region', 'refresh_token'])('missing %s -> 400', async (k) => {
    const r = await h.api('POST', '/service/sp/sp-id', svc({ ...CREDS, [k]: undefined }));
    expect(r.status).toBe(400);
    expect(r.body.errors[0].detail).toMatch(k);
    expect((await h.api('POST', '/service/sp/validate-creds', svc({ ...CREDS, [k]: undefined }))).status).toBe(400);
  });
  test('invalid region and wrong credentials -> 400, and the secret is not echoed', async () => {
    expect((await h.api('POST', '/service/sp/sp-id', svc({ ...CREDS, region: 'xx' }))).status).toBe(400);
    const r = await h.api('POST', '/service/sp/sp-id', svc({ ...CREDS, client_secret: 'wrong-secret-123' }));
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).not.toContain('wrong-secret-123');
  });
  test('validate-creds: 204 valid, 400 invalid', async () => {
    expect((await h.api('POST', '/service/sp/validate-creds', svc(CREDS))).status).toBe(204);
    expect((await h.api('POST', '/service/sp/validate-creds', svc({ ...CREDS, refresh_token: 'Atzr|nope' }))).status).toBe(400);
  });
});

describe('validate-asins', () => {
  test('tests in batches of 20 across the identity marketplaces', async () => {
    const asins = Array.from({ length: 45 }, (_, i) => `B0${String(i + 1).padStart(8, '0')}`).concat(['NOTANASIN']);
    const r = await h.api('POST', '/service/sp/validate-asins/362', svc({ asins }));
    expect(r.status).toBe(200);
    expect(r.body.valid_asins).toHaveLength(45);
    expect(r.body.invalid_asins).toEqual(['NOTANASIN']);
    const b35 = r.body.valid_asins.find((v: any) => v.asin === 'B000000035');
    expect(b35.attributes.marketplace_ids.sort()).toEqual(['A2EUQ1WTGCTBG2', 'ATVPDKIKX0DER']);
    const st = await h.state();
    expect(st.asinValidation.lastCallBatches).toBe(3);
    const v = await h.api('POST', '/service/sp/validate-asins/363', svc({ asins: ['B000000045'] }));
    expect(v.body.invalid_asins).toEqual(['B000000045']);
    expect((await h.state()).asinValidation.lastCallBatches).toBe(1);
  });
  test('bad bodies -> 400; non-SP identity -> 400', async () => {
    expect((await h.api('POST', '/service/sp/validate-asins/362', svc({ asins: [] }))).status).toBe(400);
    expect((await h.api('POST', '/service/sp/validate-asins/362', svc({ asins: [1] }))).status).toBe(400);
    expect((await h.api('POST', '/service/sp/validate-asins/365', svc({ asins: ['B000000001'] }))).status).toBe(400);
  });
});
