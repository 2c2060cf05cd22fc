import { Harness, useHarness } from './helpers';

/**
 * The identity meta routes of the vendor's remote-identity-api.md ("List Remote Identity Meta", "Get Remote Identity
 * Meta Overview"), black-box: served in vendor reads, 404 in minimal reads (the spec shows neither).
 * docs/emulator.md ("Vendor docs traceability") maps each to its test.
 */
describe("remote identity meta, reads: 'vendor'", () => {
  let h: Harness;
  useHarness((started) => {
    h = started;
  }, { reads: 'vendor', fixtures: { pageSize: 2 } }, { reset: true });

  const ids = (r: { body: { data: Array<{ id: string }> } }): string[] => r.body.data.map((x) => x.id);

  /** A private-app identity 366 of account 1001 whose credential payloads a fixture gives (ciphertext as held). */
  async function loadPrivateApp(): Promise<void> {
    const r = await h.admin('POST', '/fixtures', {
      remoteIdentities: [{ id: 366, account: 1001, name: 'Vendor private app', remote_identity_type_id: 18 }],
      remoteIdentityMeta: [
        { id: 3661, remote_identity: 366, remote_identity_type_meta_key: 26, meta_value: 'amzn1.application-oa2-client.private', meta_format: 'STRING' },
        { id: 3662, remote_identity: 366, remote_identity_type_meta_key: 27, meta_value: 'ENCRYPTED:fixture-ciphertext-1', meta_format: 'ENCRYPTED_STRING' },
        { id: 3663, remote_identity: 366, remote_identity_type_meta_key: 7, meta_value: 'ENCRYPTED:fixture-ciphertext-2', meta_format: 'ENCRYPTED_STRING' },
        { id: 3664, remote_identity: 366, remote_identity_type_meta_key: 32, meta_value: '1234567890', meta_format: 'STRING' },
        { id: 3665, remote_identity: 366, remote_identity_type_meta_key: 99, key_name: 'custom_settings', meta_value: '{"a":1}', meta_format: 'JSON' },
      ],
    });
    expect(r.status).toBe(200);
  }

  test('remote-identity-api.md: GET /rim lists the meta of the caller\'s identities, paginated', async () => {
    const first = await h.api('GET', '/rim');
    expect(first.status).toBe(200);
    // the defaults: identity 362's configuration values; identity 372 is account 1002's
    expect(ids(first)).toEqual(['3621', '3622']);
    expect(first.body.meta.pagination).toEqual({ page: 1, pages: 2, count: 3 });
    expect(first.body.links.next).toContain('/rim?page=2');
    expect(ids(await h.api('GET', '/rim?page=2'))).toEqual(['3623']);
    expect(first.body.data[0]).toEqual({
      type: 'RemoteIdentityMeta',
      id: '3621',
      attributes: {
        remote_identity_id: 362,
        remote_identity_type_meta_key: 26,
        remote_identity_type_meta_key_name: 'client_id',
        meta_value: 'amzn1.application-oa2-client.emulator',
        meta_format: 'STRING',
        created_at: '2024-01-01T00:00:00',
        modified_at: '2024-01-01T00:00:00',
      },
      relationships: {
        remote_identity: { data: { type: 'RemoteIdentity', id: '362' } },
        remote_identity_type_meta_key: { data: { type: 'RemoteIdentityTypeMetaKey', id: '26' } },
      },
    });
    expect(ids(await h.other('GET', '/rim'))).toEqual(['3721']);
  });

  test('remote-identity-api.md: GET /rim filters remote_identity and meta_format (one of the four formats)', async () => {
    await loadPrivateApp();
    expect(ids(await h.api('GET', '/rim?remote_identity=366&page_size=10'))).toEqual(['3661', '3662', '3663', '3664', '3665']);
    const encrypted = await h.api('GET', '/rim?remote_identity=366&meta_format=ENCRYPTED_STRING');
    expect(ids(encrypted)).toEqual(['3662', '3663']);
    // an encrypted value is the ciphertext the fixture holds, never one the emulator made up
    expect(encrypted.body.data.map((x: any) => x.attributes.meta_value)).toEqual(['ENCRYPTED:fixture-ciphertext-1', 'ENCRYPTED:fixture-ciphertext-2']);
    expect(ids(await h.api('GET', '/rim?meta_format=JSON'))).toEqual(['3665']);
    expect(ids(await h.api('GET', '/rim?meta_format=ENCRYPTED_JSON'))).toEqual([]);
    // another account's identity: nothing, whatever the filter
    expect(ids(await h.api('GET', '/rim?remote_identity=372'))).toEqual([]);
    expect((await h.api('GET', '/rim?meta_format=PLAIN')).status).toBe(400);
    expect((await h.api('GET', '/rim?remote_identity=seller')).status).toBe(400);
  });

  test('remote-identity-api.md: GET /rim does not list the meta of an identity shared with the caller', async () => {
    expect((await h.admin('POST', '/fixtures', {
      remoteIdentities: [{ id: 380, account: 1002, name: 'Shared seller', remote_identity_type_id: 17, shared_with: [1001] }],
      remoteIdentityMeta: [{ id: 3801, remote_identity: 380, remote_identity_type_meta_key: 31, meta_value: 'eu', meta_format: 'STRING' }],
    })).status).toBe(200);
    expect(ids(await h.api('GET', '/rim?remote_identity=380'))).toEqual([]);
    expect(ids(await h.other('GET', '/rim?remote_identity=380'))).toEqual(['3801']);
    expect((await h.api('GET', '/ri/380/rim-overview')).status).toBe(404);
  });

  test('remote-identity-api.md: GET /ri/{id}/rim-overview shows the keys present without their values', async () => {
    await loadPrivateApp();
    const r = await h.api('GET', '/ri/366/rim-overview?page_size=10');
    expect(r.status).toBe(200);
    expect(r.body.meta.pagination.count).toBe(5);
    expect(r.body.data.map((x: any) => [x.attributes.remote_identity_type_meta_key_name, x.attributes.meta_format])).toEqual([
      ['client_id', 'STRING'],
      ['client_secret', 'ENCRYPTED_STRING'],
      ['refresh_token', 'ENCRYPTED_STRING'],
      ['vendor_group_id', 'STRING'],
      ['custom_settings', 'JSON'],
    ]);
    for (const x of r.body.data) {
      expect(x.type).toBe('RemoteIdentityMetaOverview');
      expect(x.attributes).not.toHaveProperty('meta_value');
    }
    expect(JSON.stringify(r.body)).not.toContain('fixture-ciphertext');
  });

  test('remote-identity-api.md: rim-overview filter remote_identity_type_meta_key_name; unknown or another account\'s identity 404', async () => {
    await loadPrivateApp();
    const one = await h.api('GET', '/ri/366/rim-overview?remote_identity_type_meta_key_name=refresh_token');
    expect(ids(one)).toEqual(['3663']);
    expect(ids(await h.api('GET', '/ri/366/rim-overview?remote_identity_type_meta_key_name=nope'))).toEqual([]);
    // a seller identity's key 32 is its selling_partner_id
    expect(ids(await h.api('GET', '/ri/362/rim-overview?remote_identity_type_meta_key_name=selling_partner_id'))).toEqual(['3623']);
    expect(ids(await h.api('GET', '/ri/363/rim-overview'))).toEqual([]);
    expect((await h.api('GET', '/ri/372/rim-overview')).status).toBe(404);
    expect((await h.api('GET', '/ri/99999/rim-overview')).status).toBe(404);
    expect((await h.api('GET', '/ri/abc/rim-overview')).status).toBe(404);
  });

  test('fixtures: a meta record with an unknown format or without a value is refused', async () => {
    const bad = await h.admin('POST', '/fixtures', {
      remoteIdentityMeta: [{ id: 1, remote_identity: 362, remote_identity_type_meta_key: 31, meta_value: 'na', meta_format: 'PLAIN' }],
    });
    expect(bad.status).toBe(400);
    const noValue = await h.admin('POST', '/fixtures', {
      remoteIdentityMeta: [{ id: 1, remote_identity: 362, remote_identity_type_meta_key: 31, meta_format: 'STRING' }],
    });
    expect(noValue.status).toBe(400);
  });
});

describe("remote identity meta, reads: 'minimal'", () => {
  let h: Harness;
  useHarness((started) => {
    h = started;
  }, { reads: 'minimal' });

  test('remote-identity-api.md: /rim and /ri/{id}/rim-overview answer 404 (the spec shows no identity meta)', async () => {
    expect((await h.api('GET', '/rim')).status).toBe(404);
    expect((await h.api('GET', '/rim?remote_identity=362')).status).toBe(404);
    expect((await h.api('GET', '/ri/362/rim-overview')).status).toBe(404);
    // the identity itself is still served
    expect((await h.api('GET', '/ri/362')).status).toBe(200);
  });
});
