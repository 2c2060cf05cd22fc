/**
 * `dpi plan`'s reads of the records a deploy adopts (src/cli/commands/plan-adoptions.ts): the reads are bounded (one read each for a few; one listing and one bulk parameter read for many), and that
 * `planResource` then plans an adoption the service already matches as `no change`.
 */
import { clearRequests, requests, useCliEmulator } from './helpers';
import { readAdoptions, SINGLE_READS_UP_TO, withAdoptions } from '../../src/cli/commands/plan-adoptions';
import { DpiClient, endpointsFromBase } from '../../src/client';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator } from '../../src/emulator';
import { planResource } from '../../src/handler/plan';

let emu: RunningEmulator;
useCliEmulator((e) => {
  emu = e;
}, { resetEach: true, reads: 'vendor' });

const client = (): DpiClient => new DpiClient({ endpoints: endpointsFromBase(emu.url), refreshToken: DEFAULT_REFRESH_TOKEN });

async function subscribe(c: DpiClient, name: string, status: 'active' | 'paused' = 'active'): Promise<string> {
  const s = await c.subscriptions.create({
    account: 1001, user: 2001, date_start: '2026-01-01T00:00:00Z', product: 3001, remote_identity: 362, storage_group: 501, name, status: 'active', product_parameters: { marketplace_id: 'ATVPDKIKX0DER' },
  } as never);
  if (status === 'paused') await c.subscriptions.update(String(s.id), { status: 'paused' });
  return String(s.id);
}

const declared = (adopt: string, name: string): Record<string, unknown> => ({
  ProductId: '3001', RemoteIdentityId: '362', StorageGroupId: '501', Name: name, ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' }, AdoptId: adopt,
});

test('a few adoptions are read one by one, many with one listing; the plan of a matching adoption is no change, a paused one is re-activated', async () => {
  const c = client();
  const few = [await subscribe(c, 'a'), await subscribe(c, 'b', 'paused')];
  await clearRequests(emu);
  const reads = await readAdoptions(c, [...few, '999999']);
  const seen = (await requests(emu)).filter((r) => r.path !== '/auth/api/ref').map((r) => `${r.method} ${r.path}`);
  expect(seen).toEqual([`GET /sub/${few[0]}`, `GET /sub/${few[1]}`, 'GET /sub/999999', 'GET /v2/spp/bulk']);
  expect(reads.get('999999')).toEqual({});
  const plan = withAdoptions(planResource, reads);
  const entry = (id: string, name: string): ReturnType<typeof planResource> =>
    plan({ type: 'Custom::DpiSubscription', stack: 'S', logicalId: `L${id}`, newProps: declared(id, name) });
  expect(entry(few[0], 'a').action).toBe('no-change');
  const paused = entry(few[1], 'b');
  expect(paused.action).toBe('update');
  expect(paused.effects.join(' ')).toContain(`subscription ${few[1]} is paused in the service: this deploy makes it active`);
  expect(entry('999999', 'x').failure).toContain('no such subscription');

  const many: string[] = [];
  for (let i = 0; i <= SINGLE_READS_UP_TO; i++) many.push(await subscribe(c, `m${i}`));
  await clearRequests(emu);
  const all = await readAdoptions(c, many);
  const listed = (await requests(emu)).filter((r) => r.path !== '/auth/api/ref');
  expect(listed.filter((r) => /^\/(v2\/)?sub\/\d/.test(r.path))).toEqual([]);
  expect(listed.filter((r) => r.path === '/v2/spp/bulk')).toHaveLength(1);
  expect([...all.values()].every((h) => h.subscription !== undefined && h.stored !== undefined)).toBe(true);
  // With the account's listing at hand (the plan's live state), only the stored parameters are read.
  const listing = new Map((await c.subscriptions.list()).map((s) => [String(s.id), s]));
  await clearRequests(emu);
  const again = await readAdoptions(c, many, listing);
  expect((await requests(emu)).filter((r) => r.path !== '/auth/api/ref').map((r) => r.path)).toEqual(['/v2/spp/bulk']);
  expect([...again.keys()]).toEqual(many);
});
