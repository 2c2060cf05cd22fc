import { HandlerHarness, SELLER_PIPELINE } from './helpers';
import { ReadMode } from '../../src/emulator';
import { ResourceTypes } from '../../src/kinds';

/**
 * A create that attaches an identity the service marks invalid (`invalid_identity` 1, vendor reads) fails before any
 * changing call, naming the identity and what the seller must do; under minimal reads (the field absent) it goes on.
 */
const REVOKED = { id: 366, account: 1001, name: 'Revoked seller', remote_identity_type_id: 17, invalid_identity: 1 as const, marketplaces: ['ATVPDKIKX0DER'] };
const SUB = {
  ProductId: '3001',
  RemoteIdentityId: '366',
  StorageGroupId: '501',
  ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' },
  StageIds: ['1000'],
  Status: 'active',
  OnDelete: 'invalid',
};
const PIPE = { ...SELLER_PIPELINE, RemoteIdentityId: '366' };

describe.each<ReadMode>(['vendor', 'minimal'])('identity health before a create (%s reads)', (reads) => {
  let h: HandlerHarness;
  beforeAll(async () => {
    h = await HandlerHarness.start({ reads });
  });
  afterAll(async () => {
    h.assertNoSecrets();
    await h.stop();
  });
  beforeEach(async () => {
    await h.reset();
    await h.admin('POST', '/fixtures', { remoteIdentities: [REVOKED] });
    await h.clearRequests();
  });

  const changing = async (): Promise<string[]> => (await h.requests())
    .filter((r) => r.method !== 'GET' && r.path !== '/auth/api/ref').map((r) => `${r.method} ${r.path}`);

  test.each([
    ['Subscription', ResourceTypes.SUBSCRIPTION, SUB, 'the subscription to product 3001'],
    ['NotificationPipeline', ResourceTypes.NOTIFICATION_PIPELINE, PIPE, 'the notification pipeline of identity 366'],
  ])('%s Create', async (_name, type, props, what) => {
    const run = h.onEvent(h.event(type, 'Create', props));
    if (reads === 'vendor') {
      await expect(run).rejects.toThrow(new RegExp(`remote identity 366 \\(Revoked seller\\) is invalid since 2024-01-01T00:00:00 .*${what} `
        + 'was not created; the seller must re-authorize it'));
      expect(await changing()).toEqual([]);
      expect((await h.requests()).map((r) => `${r.method} ${r.path}`)).toContain('GET /ri/366');
      // Nothing in the journal: a deploy after the seller re-authorizes starts afresh.
      expect((await h.journalRecords()).filter((i) => !i.pk.startsWith('lease'))).toEqual([]);
    } else {
      // The health is unknown: the create is not refused for it.
      const r = await run.catch((e: Error) => e);
      if (r instanceof Error) expect(r.message).not.toMatch(/is invalid/);
      expect(await changing()).not.toEqual([]);
    }
  });
});
