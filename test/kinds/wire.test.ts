/** The typed read of a kind's wire properties: CloudFormation's strings coerced per the kind's field spec. */
import { readProps } from '../../src/handler/props';
import { FieldCode, HISTORY_REQUEST_FIELDS, KINDS, SUBSCRIPTION_FIELDS } from '../../src/kinds';

describe('readProps', () => {
  test('coerces the strings CloudFormation delivers to the spec\'s types', () => {
    const w = readProps({
      ProductId: '3001',
      StorageGroupId: '501',
      RemoteIdentityId: '362',
      ProductParameters: { marketplace_id: 'X', n: 7 },
      StageIds: ['1000', 1001],
      Status: 'active',
      OnDelete: 'cancelled',
    }, SUBSCRIPTION_FIELDS, 'Subscription');
    expect(w.ProductId).toBe(3001);
    expect(w.StorageGroupId).toBe(501);
    expect(w.RemoteIdentityId).toBe('362');
    expect(w.ProductParameters).toEqual({ marketplace_id: 'X', n: '7' });
    expect(w.StageIds).toEqual(['1000', '1001']);
    expect(w.Status).toBe('active');
    expect(w.Name).toBeUndefined();
    expect(w.AdoptId).toBeUndefined();
  });

  test('absent optional values: undefined, [] and {}; booleans from true/false', () => {
    const h = readProps({ SubscriptionId: '7', WaitForCompletion: 'true' }, HISTORY_REQUEST_FIELDS, 'HistoryRequest');
    expect(h).toMatchObject({ SubscriptionId: '7', WaitForCompletion: true, Dates: [], StageId: undefined, TimeoutSeconds: undefined });
    const s = readProps({ ProductId: '1' }, SUBSCRIPTION_FIELDS, 'Subscription');
    expect(s.ProductParameters).toEqual({});
    expect(readProps({ SubscriptionId: '7' }, HISTORY_REQUEST_FIELDS, 'HistoryRequest').WaitForCompletion).toBe(false);
  });

  test('a bad value fails naming the kind, the property and the value', () => {
    expect(() => readProps({ ProductId: 'abc' }, SUBSCRIPTION_FIELDS, 'Subscription'))
      .toThrow('Subscription: property ProductId must be an integer, got "abc"');
    expect(() => readProps({ SubscriptionId: '7', WaitForCompletion: 'yes' }, HISTORY_REQUEST_FIELDS, 'HistoryRequest'))
      .toThrow('HistoryRequest: property WaitForCompletion must be \'true\' or \'false\', got "yes"');
    expect(() => readProps({}, SUBSCRIPTION_FIELDS, 'Subscription')).toThrow('Subscription: property ProductId is required');
    expect(() => readProps({ ProductId: '1', StageIds: '1000' }, SUBSCRIPTION_FIELDS, 'Subscription')).toThrow('property StageIds must be a list');
  });

  test('every kind\'s spec reads a full declaration of the kind', () => {
    // One valid value per code: each kind's spec is complete enough to read what its construct writes.
    const sample: Record<string, unknown> = { 'string': 'x', 'string?': 'x', 'int': '5', 'int?': '5', 'bool': 'false', 'list': ['a'], 'map': { a: 'b' } };
    for (const k of KINDS) {
      const raw = Object.fromEntries(Object.entries(k.fields).map(([name, code]) => [name, sample[code as string]]));
      const w = readProps(raw, k.fields as Readonly<Record<string, FieldCode>>, k.shortName) as Record<string, unknown>;
      expect(Object.keys(w).sort()).toEqual(Object.keys(k.fields).sort());
    }
  });
});
