import { TxQuery, TxQueryError, validateTxQuery } from '../../src/client';

const bad: Array<[string, object, string]> = [
  ['missing subscription_id', {}, 'subscription_id'],
  ['empty subscription_id', { subscription_id: '' }, 'subscription_id'],
  ['non-integer subscription_id', { subscription_id: 'abc' }, 'subscription_id'],
  ['fractional subscription_id', { subscription_id: 1.5 }, 'subscription_id'],
  ['unknown parameter', { subscription_id: 1, foo: 'x' }, 'foo'],
  ['misspelled parameter', { subscription_id: 1, timestamp_form: 1 }, 'timestamp_form'],
  ['repeated (array) parameter', { subscription_id: 1, status: ['ERROR', 'RETRY'] }, 'status'],
  ['null value', { subscription_id: 1, sender: null }, 'sender'],
  ['limit 0', { subscription_id: 1, limit: 0 }, 'limit'],
  ['limit 201', { subscription_id: 1, limit: 201 }, 'limit'],
  ['limit not integer', { subscription_id: 1, limit: 10.5 }, 'limit'],
  ['limit text not integer', { subscription_id: 1, limit: '1e2' }, 'limit'],
  ['tree_depth without tree', { subscription_id: 1, tree_depth: 2 }, 'tree_depth'],
  ['tree_depth with tree=false', { subscription_id: 1, tree: false, tree_depth: 2 }, 'tree_depth'],
  ['tree_depth 0', { subscription_id: 1, tree: true, tree_depth: 0 }, 'tree_depth'],
  ['tree_depth 5', { subscription_id: 1, tree: 'true', tree_depth: 5 }, 'tree_depth'],
  ['tree not boolean', { subscription_id: 1, tree: 'yes' }, 'tree'],
  ['timestamp_from > timestamp_to', { subscription_id: 1, timestamp_from: 200, timestamp_to: 100 }, 'timestamp_from'],
  ['timestamp_to text not integer', { subscription_id: 1, timestamp_to: '17e8' }, 'timestamp_to'],
  ['time_to_live not integer', { subscription_id: 1, time_to_live: 'soon' }, 'time_to_live'],
  ['modified_at_from > modified_at_to', { subscription_id: 1, modified_at_from: '2026-11-22T10:00:00Z', modified_at_to: '2026-11-22T09:59:59Z' }, 'modified_at_from'],
  ['string filter not a string', { subscription_id: 1, job_id: 5 }, 'job_id'],
  ['empty cursor', { subscription_id: 1, cursor: '' }, 'cursor'],
];

describe('validateTxQuery rejects', () => {
  test.each(bad)('%s', (_name, q, param) => {
    let err: unknown;
    try {
      validateTxQuery(q as TxQuery);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TxQueryError);
    expect((err as TxQueryError).parameter).toBe(param);
    expect((err as TxQueryError).message).toContain(`'${param}'`);
  });
});

const good: Array<[string, TxQuery]> = [
  ['only subscription_id', { subscription_id: 9001 }],
  ['numeric strings', { subscription_id: '9001', limit: '200', timestamp_from: '1', timestamp_to: '1' }],
  ['limit bounds', { subscription_id: 1, limit: 1 }],
  ['tree with depth 4', { subscription_id: 1, tree: true, tree_depth: 4 }],
  ['tree text with depth 1', { subscription_id: 1, tree: 'true', tree_depth: '1' }],
  ['equal modified_at bounds', { subscription_id: 1, modified_at_from: 'a', modified_at_to: 'a' }],
  ['lexicographic, not numeric, comparison', { subscription_id: 1, modified_at_from: '10', modified_at_to: '9' }],
  ['one bound alone', { subscription_id: 1, timestamp_to: 5 }],
  ['undefined values ignored', { subscription_id: 1, status: undefined, tree_depth: undefined }],
  ['every filter', {
    subscription_id: 1,
    limit: 50,
    cursor: 'c',
    timestamp_from: 1,
    timestamp_to: 2,
    modified_at_from: 'a',
    modified_at_to: 'b',
    attribution_date: '2026-11-22',
    job_id: 'j',
    sender: 'zeroadmin',
    status: 'PROCESSED',
    parent: 'p',
    payload_name: 'x',
    product_name: 'y',
    subscription_name: 'z',
    error_code: 'E',
    error_message: 'm',
    file_path: '/f',
    time_to_live: 3,
    tree: false,
  }],
];

describe('validateTxQuery accepts', () => {
  test.each(good)('%s', (_name, q) => {
    expect(() => validateTxQuery(q)).not.toThrow();
  });
});
