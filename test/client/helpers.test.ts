import {
  cronForMinute, decodeStageIds, encodeStageIds, HistoryCreate, ORDER_ID_PATTERN, planOrderJobBatches, ProductDefinition,
  validateHistoryRequest,
} from '../../src/client';

const orderId = (i: number): string => `123-${String(1000000 + i)}-${String(7654321 + i).padStart(7, '0')}`;

describe('planOrderJobBatches', () => {
  test('250 IDs -> 3 batches of 100/100/50, 15 minutes apart, crossing midnight changes the valid dates', () => {
    const ids = Array.from({ length: 250 }, (_, i) => orderId(i));
    const batches = planOrderJobBatches({ orderIds: ids, start: new Date('2026-11-22T23:40:30Z') });
    expect(batches.map((b) => b.orderIds.length)).toEqual([100, 100, 50]);
    expect(batches.flatMap((b) => b.orderIds)).toEqual(ids);
    expect(batches.map((b) => b.scheduledAt.toISOString())).toEqual(['2026-11-22T23:40:00.000Z', '2026-11-22T23:55:00.000Z', '2026-11-23T00:10:00.000Z']);
    expect(batches.map((b) => b.attributes.schedule)).toEqual(['40 23 22 11 *', '55 23 22 11 *', '10 0 23 11 *']);
    expect(batches.map((b) => [b.attributes.valid_date_start, b.attributes.valid_date_end]))
      .toEqual([['2026-11-22', '2026-11-22'], ['2026-11-22', '2026-11-22'], ['2026-11-23', '2026-11-23']]);
    expect(batches[2].attributes).toEqual({
      is_primary: false,
      valid_date_start: '2026-11-23',
      valid_date_end: '2026-11-23',
      stage_id: 1000,
      extra_context: JSON.stringify({ order_ids: ids.slice(200) }),
      request_start: 1,
      request_end: 0,
      schedule: '10 0 23 11 *',
    });
    expect(JSON.parse(batches[0].attributes.extra_context)).toEqual({ order_ids: ids.slice(0, 100) });
  });

  test('year end and custom stage', () => {
    const b = planOrderJobBatches({ orderIds: [orderId(1), orderId(2)], start: new Date('2026-12-31T23:59:00Z'), stageId: 1003 });
    expect(b).toHaveLength(1);
    expect(b[0].attributes).toMatchObject({ stage_id: 1003, schedule: '59 23 31 12 *', valid_date_start: '2026-12-31' });
    expect(cronForMinute(new Date('2027-01-01T00:05:00Z'))).toBe('5 0 1 1 *');
  });

  test('exactly 100 IDs -> one batch', () => {
    expect(planOrderJobBatches({ orderIds: Array.from({ length: 100 }, (_, i) => orderId(i)), start: new Date() })).toHaveLength(1);
  });

  test.each([
    ['12-1234567-1234567'], ['123-123456-1234567'], ['123-1234567-12345678'], ['abc-1234567-1234567'], [' 123-1234567-1234567'],
  ])('rejects bad order ID %p, naming it', (bad) => {
    expect(ORDER_ID_PATTERN.test(bad)).toBe(false);
    expect(() => planOrderJobBatches({ orderIds: [orderId(1), bad], start: new Date() })).toThrow(JSON.stringify(bad));
  });

  test('rejects duplicates, naming them; rejects an empty list', () => {
    expect(() => planOrderJobBatches({ orderIds: [orderId(1), orderId(2), orderId(1), orderId(3), orderId(3)], start: new Date() }))
      .toThrow(`duplicate order ID(s): ${orderId(1)}, ${orderId(3)}`);
    expect(() => planOrderJobBatches({ orderIds: [], start: new Date() })).toThrow(/at least one/);
  });
});

describe('stage IDs', () => {
  test('encode/decode', () => {
    expect(encodeStageIds([1001, '1002'])).toBe('[1001,1002]');
    expect(decodeStageIds('[1001,1002]')).toEqual([1001, 1002]);
    expect(decodeStageIds(encodeStageIds([1000]))).toEqual([1000]);
  });
  test.each([
    [[999], /below 1000/],
    [[1000, 12], /12 is below 1000/],
    [[1000.5], /not an integer/],
    [['10a1'], /not an integer/],
    [[1001, 1001], /more than once/],
    [[], /must not be empty/],
  ])('encode rejects %p', (ids, msg) => {
    expect(() => encodeStageIds(ids as number[])).toThrow(msg);
  });
  test.each(['', '1001', '{"a":1}', '[1.5]', '["1001"]'])('decode rejects %p', (s) => {
    expect(() => decodeStageIds(s)).toThrow(/stage_ids/);
  });
});

describe('validateHistoryRequest', () => {
  const card = {
    id: 5,
    name: 'Orders',
    history_info: [
      { stage_id: 1001, subproduct_id: 'default', days: 30, schedule_offset: null, max_request_time: 90 },
      { stage_id: 1002, subproduct_id: 'default', days: 7, schedule_offset: 10, max_request_time: 365 },
    ],
  } as unknown as ProductDefinition;
  const now = new Date('2026-11-22T12:00:00Z');

  const cases: Array<[string, HistoryCreate, RegExp[]]> = [
    ['range within limits for stage 1001', { start_date: '2026-10-24', end_date: '2026-11-22', stage_id: 1001 }, []],
    ['dates within limits, all stages', { dates: ['2026-11-01', '2026-11-03', '2026-11-01'], start_time: '2026-11-23 01:00:00' }, []],
    ['neither dates nor range', {}, [/either dates, or both start_date and end_date/]],
    ['both dates and range', { dates: ['2026-11-01'], start_date: '2026-11-01', end_date: '2026-11-01' }, [/not both/]],
    ['start without end', { start_date: '2026-11-01' }, [/end_date is required/]],
    ['end without start', { end_date: '2026-11-01' }, [/start_date is required/]],
    ['empty dates', { dates: [] }, [/non-empty/]],
    ['bad date format', { start_date: '2026/11/01', end_date: '2026-11-31' }, [/start_date "2026\/11\/01" is not a valid/, /end_date "2026-11-31" is not a valid/]],
    ['bad entry in dates', { dates: ['2026-11-01', '11-02-2026'] }, [/date "11-02-2026"/]],
    ['start after end', { start_date: '2026-11-10', end_date: '2026-11-01' }, [/after end_date/]],
    ['bad start_time', { dates: ['2026-11-01'], start_time: '2026-11-01T00:00' }, [/start_time/]],
    ['31 days for stage 1001 (limit 30)', { start_date: '2026-10-23', end_date: '2026-11-22', stage_id: 1001 }, [/31 days requested, but at most 30/]],
    ['8 days, all stages: strictest (1002: 7) applies', { start_date: '2026-11-01', end_date: '2026-11-08' }, [/8 days requested, but at most 7 .*stage 1002/]],
    ['8 dates for stage 1002', { dates: ['01', '02', '03', '04', '05', '06', '07', '08'].map((d) => `2026-11-${d}`), stage_id: '1002' }, [/8 days requested, but at most 7/]],
    ['too old for stage 1001 (90 days)', { dates: ['2026-08-23'], stage_id: 1001 }, [/oldest requested date 2026-08-23 is more than 90 day\(s\) before 2026-11-22.*earliest allowed date is 2026-08-24/]],
    ['90 days old is allowed', { dates: ['2026-08-24'], stage_id: 1001 }, []],
    ['old is fine for stage 1002 (365 days)', { dates: ['2026-01-01'], stage_id: 1002 }, []],
    ['old, all stages: strictest age applies', { dates: ['2026-01-01'] }, [/more than 90 day/]],
    ['unknown stage', { dates: ['2026-11-01'], stage_id: 1005 }, [/stage_id 1005 is not in the product's history_info \(stages: 1001, 1002\)/]],
  ];

  test.each(cases)('%s', (_name, req, expected) => {
    const problems = validateHistoryRequest(req, card, now);
    expect(problems).toHaveLength(expected.length);
    expected.forEach((re, i) => expect(problems[i]).toMatch(re));
  });

  test('a product without history_info cannot have history', () => {
    const p = validateHistoryRequest({ dates: ['2026-11-01'] }, { id: 3, name: 'S3', history_info: null } as unknown as ProductDefinition, now);
    expect(p).toEqual(['product 3 (S3) has no history settings (history_info); history cannot be requested']);
  });
});
