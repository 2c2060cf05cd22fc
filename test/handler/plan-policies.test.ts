import { SELLER_PIPELINE } from './helpers';
import { planTemplatePair } from '../../src/cli/commands/plan-compare';
import { planResource } from '../../src/handler/plan';
import { ResourceTypes } from '../../src/kinds';
import { Template } from '../../src/local/template';

// CloudFormation's own policies: a resource it keeps gets no Delete, so the handler never ends the record.
const SUB = {
  ProductId: '3001',
  RemoteIdentityId: '362',
  StorageGroupId: '501',
  ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' },
  Name: 'Orders',
  RemovalPolicy: 'destroy',
};
const PIPE = { ...SELLER_PIPELINE, RemovalPolicy: 'destroy' };
const at = { stack: 'App', logicalId: 'Res' };

describe('plan: CloudFormation DeletionPolicy and UpdateReplacePolicy', () => {
  test.each([
    [ResourceTypes.SUBSCRIPTION, SUB],
    [ResourceTypes.NOTIFICATION_PIPELINE, PIPE],
  ])('%s leaving the stack: destroy policy deletes; DeletionPolicy Retain keeps the record with no call', (type, props) => {
    const plain = planResource({ ...at, type, physicalId: '9001', oldProps: props });
    expect(plain.action).toBe('delete');
    expect(plain.calls.length).toBeGreaterThan(0);
    for (const policy of ['Retain', 'RetainExceptOnCreate']) {
      const kept = planResource({ ...at, type, physicalId: '9001', oldProps: props, deletionPolicy: policy });
      expect(kept.action).toBe('retain');
      expect(kept.calls).toEqual([]);
      expect(kept.effects.join(' ')).toContain(`DeletionPolicy ${policy}`);
      expect(kept.effects.join(' ')).toContain('9001');
    }
    // The other policy does not apply to a resource that leaves.
    expect(planResource({ ...at, type, physicalId: '9001', oldProps: props, updateReplacePolicy: 'Retain' }).action).toBe('delete');
  });

  test('a replacement under UpdateReplacePolicy Retain makes the new record and sends nothing to the old one', () => {
    const next = { ...SUB, ProductId: '3002' };
    const plain = planResource({ ...at, type: ResourceTypes.SUBSCRIPTION, physicalId: '9001', oldProps: SUB, newProps: next });
    expect(plain.action).toBe('replace');
    expect(plain.calls.some((c) => c.path === '/v2/sub/9001')).toBe(true);
    const kept = planResource({
      ...at, type: ResourceTypes.SUBSCRIPTION, physicalId: '9001', oldProps: SUB, newProps: next, updateReplacePolicy: 'Retain',
    });
    expect(kept.action).toBe('replace');
    const line = (c: { method: string; path: string }): string => `${c.method} ${c.path}`;
    // Ending the old one is its PATCH and the conditional cancels of its open history requests.
    const ending = (c: { path: string; when?: string }): boolean => c.path === '/v2/sub/9001' || c.when === 'for each open history request';
    expect(kept.calls.map(line)).toEqual(plain.calls.filter((c) => !ending(c)).map(line));
    expect(kept.calls.length).toBeGreaterThan(0);
    expect(kept.effects.join(' ')).toContain('UpdateReplacePolicy Retain');
    expect(kept.effects.join(' ')).not.toContain('9001 becomes invalid');
  });

  test('the template comparison hands the deployed DeletionPolicy and the declared UpdateReplacePolicy to the plan', () => {
    const res = (props: Record<string, unknown>, extra: Record<string, unknown> = {}): object =>
      ({ Type: ResourceTypes.SUBSCRIPTION, Properties: props, ...extra });
    const oldTemplate = {
      Resources: {
        Kept: res(SUB, { DeletionPolicy: 'Retain' }),
        Gone: res({ ...SUB, Name: 'Gone' }),
        Moved: res({ ...SUB, Name: 'Moved' }),
      },
    } as unknown as Template;
    const newTemplate = {
      Resources: { Moved: res({ ...SUB, Name: 'Moved', ProductId: '3002' }, { UpdateReplacePolicy: 'Retain' }) },
    } as unknown as Template;
    const physicalIds = new Map([['Kept', '9001'], ['Gone', '9002'], ['Moved', '9003']]);
    const entries = planTemplatePair({ display: 'App', oldTemplate, newTemplate, physicalIds }, planResource);
    const byId = new Map(entries.map((e) => [e.logicalId, e]));
    expect(byId.get('Kept')?.action).toBe('retain');
    expect(byId.get('Kept')?.calls).toEqual([]);
    expect(byId.get('Gone')?.action).toBe('delete');
    expect(byId.get('Gone')?.calls.map((c) => c.path)).toContain('/v2/sub/9002');
    expect(byId.get('Moved')?.action).toBe('replace');
    expect(byId.get('Moved')?.calls.map((c) => c.path)).not.toContain('/v2/sub/9003');
  });
});
