import { fitData, MAX_DATA_BYTES } from '../../src/handler/data';
import { reasonOf, registerSecret, HandlerError, MAX_REASON_LENGTH } from '../../src/handler/errors';
import { refreshTokenFromSecret } from '../../src/handler/runtime';
import { keyPrefix, pipelineData } from '../../src/kinds/notification-pipeline/runtime/handler-state';

describe('Data size', () => {
  test('long comma lists are cut at an item boundary with a count of what was left out', () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `job-${String(i).padStart(8, '0')}`);
    const out = fitData({ PrimaryJobId: 'j-1', JobIds: ids.join(','), BatchCount: '2000' });
    expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThanOrEqual(MAX_DATA_BYTES);
    expect(out.PrimaryJobId).toBe('j-1');
    expect(out.BatchCount).toBe('2000');
    const m = /^(.*),\.\.\.\(\+(\d+) more\)$/.exec(out.JobIds)!;
    expect(m).not.toBeNull();
    const kept = m[1].split(',');
    expect(kept.every((k, i) => k === ids[i])).toBe(true);
    expect(kept.length + Number(m[2])).toBe(2000);
  });

  test('small data is unchanged; a single long value is cut plainly', () => {
    expect(fitData({ a: 'x,y' })).toEqual({ a: 'x,y' });
    const out = fitData({ a: 'z'.repeat(10_000) });
    expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThanOrEqual(MAX_DATA_BYTES);
  });
});

describe('failure reasons', () => {
  test('secrets, JWTs, bearer tokens and URL credentials are removed; the reason is cut to ~500 characters', () => {
    registerSecret('super-secret-refresh-token');
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJhY2NvdW50IjoxfQ.c2ln';
    const r = reasonOf(new HandlerError(`bad super-secret-refresh-token ${jwt} Bearer abc.def https://user:pw@example.com/x ${'y'.repeat(1000)}`));
    expect(r).not.toContain('super-secret-refresh-token');
    expect(r).not.toContain(jwt);
    expect(r).not.toContain('abc.def');
    expect(r).not.toContain('user:pw');
    expect(r.length).toBeLessThanOrEqual(MAX_REASON_LENGTH);
  });

  test('the secret string is the raw token or JSON with refreshToken / refresh_token', () => {
    expect(refreshTokenFromSecret('tok-1')).toBe('tok-1');
    expect(refreshTokenFromSecret('{"refreshToken":"tok-2"}')).toBe('tok-2');
    expect(refreshTokenFromSecret('{"refresh_token":"tok-3"}')).toBe('tok-3');
    expect(() => refreshTokenFromSecret('{"other":"x"}')).toThrow('without a refreshToken');
    expect(() => refreshTokenFromSecret('{"refreshToken":')).toThrow('cannot be parsed');
  });
});

describe('the Prefix attribute', () => {
  const meta = (prefix: unknown): Record<string, unknown> => ({ s3_bucket_name: 'b', s3_notification_prefix: prefix });
  test('ends with the delimiter, so the grant\'s <prefix>* covers this pipeline\'s keys only', () => {
    expect(pipelineData('9001', ['ORDER_CHANGE'], { ORDER_CHANGE: 's' }, [], meta('0123456789abcdef/')).Prefix).toBe('0123456789abcdef/');
    // A service answer without it: added (`abc*` would also cover `abcd/...` of another pipeline).
    expect(pipelineData('9001', ['ORDER_CHANGE'], { ORDER_CHANGE: 's' }, [], meta('notifications/362/abc')).Prefix).toBe('notifications/362/abc/');
    expect(pipelineData('9001', [], {}, [], meta(undefined)).Prefix).toBe('');
    expect(keyPrefix('')).toBe('');
  });
});
