/**
 * Resource leases: one invocation at a time per resource (journal key), held in the lifecycle journal.
 *
 * CloudFormation sends a resource one event at a time, but the cloud delivers more than that: the same event twice
 * (Lambda's at-least-once invocation, the provider framework's re-invoke after an invoke error), and, when another
 * resource of the operation fails, a Delete with an invented physical ID while the resource's Create is still running
 * (the cancellation of an in-flight Create; aws-cdk-lib `custom-resources/README.md`, "Important cases to handle").
 * Each invocation of a resource therefore takes the resource's lease before it reads or changes anything, and holds it
 * until it returns. A lease is never taken over from a live invocation: it expires with its holder's Lambda deadline
 * (when the container is stopped), so a stopped invocation's lease frees itself.
 *
 * An invocation of another request (another `RequestId`) that finds a Create or Update holding the lease marks it
 * cancelled: CloudFormation has moved on from that request (it sends a resource's next event only after the last one's
 * answer, or after it stopped waiting for it). The running Create sees the mark before its creating call and makes
 * nothing; what it made before the mark is ended by the waiting Delete, which runs as soon as the Create returns.
 *
 * Item: `pk` = `lease#<resource key>`, `sk` = `lease`; `holder` (the invocation), `requestId`, `requestType`, `since`,
 * `expiresAt` (ISO), and `cancelledBy` (the request that marked it).
 */
import { randomBytes } from 'crypto';
import type * as ddb from '@aws-sdk/client-dynamodb';
import { conditionFailed, JournalOptions, LEASE_PREFIX, openJournalTable } from './journal';

/** The holder of a resource's lease, or the last one (once released or expired). */
export interface LeaseMark {
  /** The invocation (`<request ID>|<random>`). */
  readonly holder: string;
  readonly requestId: string;
  readonly requestType: string;
  /** ISO time this invocation took it. */
  readonly since: string;
  /** ISO time the first invocation of the same request took it (an event delivered twice runs twice). */
  readonly requestSince: string;
  /** ISO time it expires: its holder's Lambda deadline. */
  readonly expiresAt: string;
  /** The request that marked the holder cancelled. */
  readonly cancelledBy?: string;
  /**
   * The requests of this resource that CloudFormation moved on from (a Create or Update marked cancelled, or followed
   * by a Delete with an invented physical ID): a later delivery of one of them makes nothing. Kept across holders.
   */
  readonly cancelledRequests?: readonly string[];
  /**
   * The last Create of the resource whose outcome CloudFormation may not know: set by a Create, kept by the Deletes
   * that follow it (a failed one included), cleared by an Update (which names the physical ID CloudFormation knows).
   */
  readonly lastCreate?: { readonly requestId: string; readonly requestSince: string };
}

/** What the lease tells the invocation that holds it. */
export interface LeaseScope {
  /**
   * The Create that held the lease last, when it was another request than this one: for a Delete with no physical ID
   * of the service, the Create whose outcome CloudFormation never learned.
   */
  readonly previousCreate?: { readonly requestId: string; readonly requestSince: string };
  /**
   * The Update that held the lease last, when this invocation is an Update of another request (an UPDATE_ROLLBACK, or
   * the next deploy): CloudFormation moved on from it, so what it made under another physical ID than this event's (a
   * replacement it had not answered yet, e.g. one that continued in isComplete) is known to nobody.
   */
  readonly previousUpdate?: { readonly requestId: string; readonly requestSince: string };
  /** Whether this request held the lease before (a second delivery, a continuation): its first run may have answered already. */
  readonly earlierRun?: boolean;
  /** ISO time this invocation's request first took the lease: the records it made are those created since. */
  readonly requestSince: string;
  /** The request that cancelled this invocation (CloudFormation moved on from it), or undefined. */
  cancelled(): Promise<string | undefined>;
}

/** What `take` found. */
export type LeaseTake =
  /** Taken; `previous`: the request that held it last (released or expired), if any. */
  | { readonly taken: true; readonly requestSince: string; readonly previous?: LeaseMark }
  /** Held by a live invocation. */
  | { readonly taken: false; readonly holder: LeaseMark; readonly movedOn?: undefined }
  /**
   * Not taken, nothing written: the request is one CloudFormation moved on from (in `cancelledRequests`; not a Delete).
   * `previous`: the lease as it is.
   */
  | { readonly taken: false; readonly movedOn: true; readonly previous: LeaseMark };

/** The lease operations on the journal table. */
export interface ResourceLeases {
  /** Takes the lease of resource `key` for a new invocation (`holder`, until `expiresAt`), unless a live invocation holds it. */
  take(key: string, mark: Pick<LeaseMark, 'holder' | 'requestId' | 'requestType' | 'expiresAt'>): Promise<LeaseTake>;
  /** Releases the lease if `holder` still holds it (no error otherwise: it expired); what it held stays recorded. */
  release(key: string, holder: string): Promise<void>;
  /** Marks the live Create or Update holding `key`'s lease cancelled by `by` (a request ID): true when one was marked. */
  cancel(key: string, by: string): Promise<boolean>;
  /** The request that cancelled `holder`'s lease of `key`; undefined while it is not cancelled. */
  cancelledBy(key: string, holder: string): Promise<string | undefined>;
}

/** The longest a lease can be held: a Lambda invocation's 15 minutes and a minute for clocks. */
export const MAX_LEASE_MS = 16 * 60_000;

/**
 * Whether a held lease is live: its expiry is a time not yet passed and no later than its start plus the longest a
 * Lambda runs. A lease with an implausible start or expiry (a far-future or malformed time, written by no handler)
 * holds nothing, so a planted item cannot block a resource.
 */
export function plausiblyLive(since: string | undefined, expiresAt: string | undefined, nowMs = Date.now()): boolean {
  const start = Date.parse(since ?? '');
  const end = Date.parse(expiresAt ?? '');
  if (Number.isNaN(start) || Number.isNaN(end) || start > nowMs + 60_000) return false;
  return end >= nowMs && end <= start + MAX_LEASE_MS;
}

/** A new invocation's holder ID. */
export function newHolder(requestId: string): string {
  return `${requestId}|${randomBytes(6).toString('hex')}`;
}

const S = (v: string): ddb.AttributeValue => ({ S: v });

function markOf(item: Record<string, ddb.AttributeValue>): LeaseMark {
  return {
    holder: item.holder?.S ?? '',
    requestId: item.requestId?.S ?? '',
    requestType: item.requestType?.S ?? '',
    since: item.since?.S ?? '',
    requestSince: item.requestSince?.S ?? item.since?.S ?? '',
    expiresAt: item.expiresAt?.S ?? '',
    ...(item.cancelledBy?.S !== undefined ? { cancelledBy: item.cancelledBy.S } : {}),
    ...(item.cancelledRequests?.SS !== undefined ? { cancelledRequests: item.cancelledRequests.SS } : {}),
    ...(item.lastCreate?.S !== undefined && item.lastCreateSince?.S !== undefined
      ? { lastCreate: { requestId: item.lastCreate.S, requestSince: item.lastCreateSince.S } } : {}),
  };
}

/** How many cancelled requests a lease item keeps (the newest are what a late delivery can be). */
const KEPT_CANCELLED = 50;

/** The leases of a journal table (the same table, client and checks as `dynamoJournal`). */
export function dynamoLeases(opts: JournalOptions): ResourceLeases {
  const { client: c, table, sdk: m, run } = openJournalTable(opts);
  const keyOf = (key: string): Record<string, ddb.AttributeValue> => ({ pk: S(`${LEASE_PREFIX}${key}`), sk: S('lease') });
  const read = async (key: string): Promise<Record<string, ddb.AttributeValue> | undefined> =>
    (await c.send(new m.GetItemCommand({ TableName: table, Key: keyOf(key), ConsistentRead: true }))).Item;
  const clock = opts.now ?? Date.now;
  const now = (): string => new Date(clock()).toISOString();
  return {
    take: (key, mark) => run(async () => {
      for (let round = 0; ; round++) {
        const item = await read(key);
        const live = item?.holder?.S !== undefined && plausiblyLive(item.since?.S, item.expiresAt?.S, clock());
        if (item && live) return { taken: false, holder: markOf(item) };
        const previous = item && item.requestId?.S !== undefined ? markOf(item) : undefined;
        // A stale request (a late delivery or a leftover isComplete poll of one CloudFormation moved on from) writes
        // nothing: it would give the lease a new requestSince and lastCreate, which the request that runs now (a
        // continuing Delete of the cancelled Create) reads to tell what the Create made.
        if (previous?.cancelledRequests?.includes(mark.requestId) === true && mark.requestType !== 'Delete') {
          return { taken: false, movedOn: true, previous };
        }
        const t = now();
        const same = previous?.requestId === mark.requestId;
        const requestSince = same ? previous.requestSince : t;
        // Another request takes over: CloudFormation has moved on from the previous one (it sends a resource's next
        // event only after the last one answered or after it stopped waiting), so a later delivery of it is stale.
        // The same request taking it again (a continuation, a duplicate delivery) keeps what the lease knew.
        const lastCreate = same ? previous.lastCreate
          : mark.requestType === 'Create' ? { requestId: mark.requestId, requestSince }
            : mark.requestType === 'Delete' ? previous?.lastCreate : undefined;
        const stale = [...new Set([...(previous?.cancelledRequests ?? []),
          ...(previous && previous.requestId !== mark.requestId && previous.requestId !== '' ? [previous.requestId] : [])])].slice(-KEPT_CANCELLED);
        try {
          await c.send(new m.PutItemCommand({
            TableName: table,
            Item: {
              ...keyOf(key),
              holder: S(mark.holder),
              requestId: S(mark.requestId),
              requestType: S(mark.requestType),
              since: S(t),
              requestSince: S(requestSince),
              expiresAt: S(mark.expiresAt),
              version: { N: String((Number(item?.version?.N ?? '0') || 0) + 1) },
              ...(stale.length > 0 ? { cancelledRequests: { SS: stale } } : {}),
              ...(lastCreate ? { lastCreate: S(lastCreate.requestId), lastCreateSince: S(lastCreate.requestSince) } : {}),
            },
            // Conditional on the version seen, whatever its shape (an item written by hand is taken once).
            ConditionExpression: item ? (item.version === undefined ? 'attribute_not_exists(version)' : 'version = :v') : 'attribute_not_exists(pk)',
            ...(item?.version !== undefined ? { ExpressionAttributeValues: { ':v': item.version } } : {}),
          }));
          return { taken: true, requestSince, ...(previous ? { previous } : {}) };
        } catch (e) {
          // Another invocation took or released it meanwhile: read again.
          if (!conditionFailed(e) || round >= 20) throw e;
        }
      }
    }),
    release: (key, holder) => run(async () => {
      try {
        await c.send(new m.UpdateItemCommand({
          TableName: table,
          Key: keyOf(key),
          UpdateExpression: 'REMOVE holder, expiresAt SET endedAt = :t, version = version + :one',
          ConditionExpression: 'holder = :h',
          ExpressionAttributeValues: { ':h': S(holder), ':t': S(now()), ':one': { N: '1' } },
        }));
      } catch (e) {
        if (!conditionFailed(e)) throw e;
      }
    }),
    cancel: (key, by) => run(async () => {
      const holder = await read(key);
      const request = holder?.requestId?.S ?? '';
      try {
        await c.send(new m.UpdateItemCommand({
          TableName: table,
          Key: keyOf(key),
          UpdateExpression: 'SET cancelledBy = :by, version = version + :one ADD cancelledRequests :r',
          ConditionExpression: 'attribute_exists(holder) AND expiresAt >= :now AND requestId <> :by AND requestId = :req '
            + 'AND requestType IN (:c, :u) AND attribute_not_exists(cancelledBy)',
          ExpressionAttributeValues: {
            ':by': S(by), ':now': S(now()), ':c': S('Create'), ':u': S('Update'), ':one': { N: '1' }, ':req': S(request), ':r': { SS: [request || '-'] },
          },
        }));
        return true;
      } catch (e) {
        if (conditionFailed(e)) return false;
        throw e;
      }
    }),
    cancelledBy: (key, holder) => run(async () => {
      const item = await read(key);
      return item?.holder?.S === holder ? item.cancelledBy?.S : undefined;
    }),
  };
}
