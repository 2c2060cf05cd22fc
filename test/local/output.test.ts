import { formatEvent, PROGRESS_STATUS_COLUMN, PROGRESS_STATUSES, shortStackName } from '../../src/local/output';

const event = (o: { stack?: string; status?: string; type?: string; logicalId?: string; reason?: string }): Parameters<typeof formatEvent>[0] => ({
  stack: o.stack ?? 'Demo',
  time: '2026-11-23T12:00:00.000Z',
  status: o.status ?? 'CREATE_COMPLETE',
  type: o.type ?? 'Custom::DpiSubscription',
  logicalId: o.logicalId ?? 'A',
  ...(o.reason ? { reason: o.reason } : {}),
});

test('progress columns line up for the usual statuses and types', () => {
  const at = (status: string, type: string): number[] => [...formatEvent(event({ status, type })).matchAll(/ \| /g)].map((m) => m.index!);
  const expected = at('CREATE_COMPLETE', 'Custom::DpiSubscription');
  for (const status of PROGRESS_STATUSES.filter((s) => s.length <= PROGRESS_STATUS_COLUMN)) {
    for (const type of ['AWS::CloudFormation::Stack', 'Custom::DpiSubscription', 'Custom::DpiHistoryRequest']) {
      expect([status, type, at(status, type)]).toEqual([status, type, expected]);
    }
  }
});

test('a fleet\'s progress lines fit 100 columns (or the given width): nested stacks by their short name, the reason below', () => {
  const nested = 'Platform-SellersPipelines1NestedStackPipelines1NestedStackResourceC35FD3B5';
  expect(shortStackName(nested)).toBe('Platform-SellersPipelines1');
  const reason = 'Remote identity 4200 is not an identity of account 1001 (the emulator knows its default fixtures and those of --fixtures FILE)';
  const text = formatEvent(event({
    stack: nested,
    status: 'UPDATE_ROLLBACK_IN_PROGRESS',
    type: 'Custom::DpiLegacyNotificationPipeline',
    logicalId: 'SellersPipelines1Identity4200PipelineWithAVeryLongLogicalIdA1B2C3D4',
    reason,
  }));
  const lines = text.split('\n');
  expect(lines.length).toBeGreaterThan(1);
  for (const l of lines) expect(l.length).toBeLessThanOrEqual(100);
  // Names shortened in the middle (their ends stay), the type without its namespace.
  expect(lines[0]).toMatch(/^Platfo…ines1 \| 12:00:00 \| UPDATE_ROLLBACK_IN_PROGRESS \| DpiLegacyNotificationPipeline \| Seller…2C3D4$/);
  // The longest status of a nested stack's own event: the type without its namespace.
  const stackLine = formatEvent(event({ stack: nested, status: 'UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS', type: 'AWS::CloudFormation::Stack', logicalId: nested }));
  expect(stackLine.length).toBeLessThanOrEqual(100);
  expect(stackLine).toMatch(/^Platform…elines1 \| 12:00:00 \| UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS \| Stack \| Platfor…elines1$/);
  expect(lines.slice(1).every((l) => l.startsWith('    '))).toBe(true);
  expect(lines.slice(1).map((l) => l.trim()).join(' ')).toBe(reason);
  for (const l of formatEvent(event({ stack: nested, logicalId: 'X'.repeat(80), reason }), 80).split('\n')) expect(l.length).toBeLessThanOrEqual(80);
  // A short line is unchanged: `<Stack> | <time> | <STATUS> | <Type> | <LogicalId>`.
  expect(formatEvent(event({}))).toBe('Demo | 12:00:00 | CREATE_COMPLETE    | Custom::DpiSubscription    | A');
});
