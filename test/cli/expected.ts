import { TxClass } from '../../src/client/classify';

/**
 * Every TX status x sender of the spec, with the class `dpi status` gives it. Written out by hand
 * (not derived from the implementation): the spec's meanings are
 * - PROCESSED: with zeroadmin = loaded; with ftpsync = formatting completed (NOT loaded);
 * - SUCCESS: older completion status; with zeroadmin also confirms loading;
 * - NO_DATA / IGNORED: completion without a new load;
 * - completion upstream of zeroadmin does not establish a load.
 */
export const EXPECTED: Record<string, Record<string, TxClass>> = {
  //                 scheduler                  supervisor                 ftpsync                    zeroadmin
  UNPROCESSED: { scheduler: 'in-progress', supervisor: 'in-progress', ftpsync: 'in-progress', zeroadmin: 'in-progress' },
  PROCESSING: { scheduler: 'in-progress', supervisor: 'in-progress', ftpsync: 'in-progress', zeroadmin: 'in-progress' },
  IN_PROGRESS: { scheduler: 'in-progress', supervisor: 'in-progress', ftpsync: 'in-progress', zeroadmin: 'in-progress' },
  RETRY: { scheduler: 'retrying', supervisor: 'retrying', ftpsync: 'retrying', zeroadmin: 'retrying' },
  ERROR: { scheduler: 'error', supervisor: 'error', ftpsync: 'error', zeroadmin: 'error' },
  PROCESSED: { scheduler: 'formatted-not-loaded', supervisor: 'formatted-not-loaded', ftpsync: 'formatted-not-loaded', zeroadmin: 'loaded' },
  SUCCESS: { scheduler: 'formatted-not-loaded', supervisor: 'formatted-not-loaded', ftpsync: 'formatted-not-loaded', zeroadmin: 'loaded' },
  NO_DATA: { scheduler: 'no-data', supervisor: 'no-data', ftpsync: 'no-data', zeroadmin: 'no-data' },
  IGNORED: { scheduler: 'duplicate-skipped', supervisor: 'duplicate-skipped', ftpsync: 'duplicate-skipped', zeroadmin: 'duplicate-skipped' },
};

export const CASES: Array<[string, string, TxClass]> = Object.entries(EXPECTED)
  .flatMap(([status, bySender]) => Object.entries(bySender).map(([sender, cls]) => [sender, status, cls] as [string, string, TxClass]));
