import { formatEvent, PROGRESS_STATUSES } from '../../src/local/output';

test('progress columns are as wide as the longest status and type: the separators line up for every status', () => {
  const at = (status: string, type: string): number[] => {
    const line = formatEvent({ stack: 'Demo', time: '2026-11-23T12:00:00.000Z', status, type, logicalId: 'A' });
    return [...line.matchAll(/ \| /g)].map((m) => m.index!);
  };
  const expected = at('CREATE_COMPLETE', 'Custom::DpiSubscription');
  for (const status of PROGRESS_STATUSES) {
    for (const type of ['AWS::CloudFormation::Stack', 'Custom::DpiLegacyNotificationPipeline', 'Custom::DpiProductOrderJobs']) {
      expect([status, type, at(status, type)]).toEqual([status, type, expected]);
    }
  }
});
