/**
 * The lifecycle journal: a DynamoDB table in the customer's account and region that records, for every
 * custom resource, what the handler is about to do (intent) and what the service answered (outcome).
 * Idempotent Create, the rollback Delete with a placeholder physical ID, UPDATE_ROLLBACK and recovery after a
 * lost response read it, never the service's read fields (the spec shows subscription reads only with `id`
 * and `status`). See docs/handler.md ("The lifecycle journal").
 *
 * One table per AWS account and region, shared by every stack; the handler creates it on first use
 * (pay-per-request, point-in-time recovery, deletion protection) and it outlives the stacks, so records that a
 * failed or deleted stack left stay findable.
 *
 * Items:
 * - a resource's records: `pk` = resource key (`<stack name>/<logical ID>`), `sk` = record ID (one per remote
 *   object the resource made or attempted: an attempt, a replacement); attributes `state`, `physicalId`,
 *   `version` (conditional writes), `updatedAt`, `doc` (JSON of the resource type's document);
 * - claims: `pk` = `claim#<kind>#<service ID>`, `sk` = `claim`, attribute `owner` (the resource key): which
 *   resource owns a service record (found without reading the service's fields);
 * - creates locks: `pk` = `inflight#<kind>` (e.g. `inflight#sub#3001`), `sk` = `lock` (the whole kind) or
 *   `lock#<part>` (e.g. one identity's), attributes `member` and `startedAt`: the one creating call of that kind (or
 *   part) whose outcome is not recorded yet, so that the resolution of a lost answer never meets what a concurrent
 *   create of the same kind made (journal-locks.ts);
 * - the request budget: `pk` = `budget#<service address>` (`sk` = `counter`) and `budget#<service address>#<slot>`
 *   (`sk` = `slot`) (rate-budget.ts).
 */
import { randomBytes } from 'crypto';
import type * as ddb from '@aws-sdk/client-dynamodb';
import { HandlerError } from './errors';
import { conditionFailed, dynamoCreatesLocks, InflightMark } from './journal-locks';
import { JournalOptions, openJournalTable } from './journal-open';
import { CfnEvent } from './types';

export { DECLARED_RECHECK_MS, openJournalTable, resetJournalCache } from './journal-open';
export type { JournalOptions, JournalTable } from './journal-open';

/** The key prefix of resource leases (journal-lease.ts): not records, skipped by `scan`. */
export const LEASE_PREFIX = 'lease#';
/** The prefix of the request budget's items (src/handler/rate-budget.ts). */
export const BUDGET_PREFIX = 'budget#';

/**
 * One record of a resource. `D`: the kind's document (written with its `kind` tag, the resource type, since the
 * kinds registry: see `taggedKind` in src/kinds; older documents have no tag); `S`: the kind's journal states
 * (e.g. `SubscriptionState`).
 */
export interface JournalRecord<D, S extends string = string> {
  readonly key: string;
  readonly id: string;
  readonly state: S;
  readonly physicalId?: string;
  readonly version: number;
  readonly updatedAt: string;
  readonly doc: D;
}

/** The journal's storage operations (DynamoDB). */
export interface Journal {
  /** Every record of a resource (strongly consistent, all pages). */
  records<D>(key: string): Promise<JournalRecord<D>[]>;
  /** Writes a new record (fails if the ID exists). */
  create<D, S extends string = string>(key: string, state: S, doc: D, physicalId?: string): Promise<JournalRecord<D, S>>;
  /** Writes a record's next state; fails when another invocation changed it meanwhile. */
  save<D, S extends string = string>(rec: JournalRecord<D, S>, state: S, doc: D, physicalId?: string): Promise<JournalRecord<D, S>>;
  /** Records that `owner` owns service record `kind`/`id`; returns the owner on record (an earlier one wins). */
  claim(kind: string, id: string, owner: string): Promise<string>;
  /** The owners of service records `kind`/`ids` (absent: unclaimed). */
  owners(kind: string, ids: string[]): Promise<Map<string, string>>;
  /** Moves a claim from `from` to `to`; false when `from` no longer owns it. */
  transfer(kind: string, id: string, from: string, to: string): Promise<boolean>;
  /**
   * Takes the creates lock of kind `kind` (e.g. `sub#3001`: product-3001 subscription creates) for `member`, or of
   * its `part` (e.g. one identity's): at most one creating call of a kind, or of a part, is in flight per journal, and
   * none of a part while the whole kind is held (journal-locks.ts). Returns undefined when `member` holds it now (also
   * when it held it already, or an earlier invocation of the same resource key did), else the holder; a holder older
   * than `staleBefore` (ISO) is replaced. The whole kind's lock, when a part is still in flight, stays written (parts
   * that come after it wait) and names the part: ask again, and release it (`unlock`) when giving up.
   */
  lock(kind: string, member: string, staleBefore: string, part?: string): Promise<InflightMark | undefined>;
  /** Releases the creates lock (of `part`, when given) if `member` holds it (no error otherwise). */
  unlock(kind: string, member: string, part?: string): Promise<void>;
  /** A fact kept beside the creates locks of `kind` (e.g. that the service narrows its lists to an identity). */
  fact(kind: string, name: string): Promise<string | undefined>;
  /**
   * Keeps a fact beside the creates locks of `kind`; with `expected`, only over that value (`null`: only where the fact
   * is not kept yet). Whether it was written.
   */
  setFact(kind: string, name: string, value: string, expected?: string | null): Promise<boolean>;
  /** Removes a fact kept beside the creates locks of `kind` (none is no error). */
  dropFact(kind: string, name: string): Promise<void>;
  /**
   * Every resource record whose key starts with `prefix` (all resources when empty) and every claim, read with a
   * scan of all pages (drift, orphans): not for the deploy path.
   */
  scan(prefix?: string): Promise<JournalScan>;
}

/** A claim: service record `kind`/`id` is owned by resource `owner`. */
export interface JournalClaim {
  readonly kind: string;
  readonly id: string;
  readonly owner: string;
}

export type { InflightMark } from './journal-locks';

/** What `Journal.scan` read. */
export interface JournalScan {
  readonly records: JournalRecord<unknown>[];
  readonly claims: JournalClaim[];
}

/** The resource key of an event: `<stack name>/<logical ID>` (stable across retries, rollbacks and redeploys). */
export function resourceKey(event: CfnEvent): string {
  const explicit = event.ResourceProperties?.JournalKey;
  if (typeof explicit === 'string' && explicit !== '') return explicit;
  // arn:aws:cloudformation:<region>:<account>:stack/<name>/<uuid>
  const m = /:stack\/([^/]+)\//.exec(event.StackId ?? '');
  return `${m ? m[1] : event.StackId}/${event.LogicalResourceId}`;
}

const S = (v: string): ddb.AttributeValue => ({ S: v });
const N = (v: number): ddb.AttributeValue => ({ N: String(v) });

function fromItem<D>(item: Record<string, ddb.AttributeValue>): JournalRecord<D> {
  let doc: D;
  try {
    doc = JSON.parse(item.doc?.S ?? '{}') as D;
  } catch {
    throw new HandlerError(`journal record ${item.pk?.S}/${item.sk?.S} is not valid JSON; restore it from the table's point-in-time backup`);
  }
  return {
    key: item.pk.S!,
    id: item.sk.S!,
    state: item.state?.S ?? '',
    physicalId: item.physicalId?.S,
    version: Number(item.version?.N ?? '0'),
    updatedAt: item.updatedAt?.S ?? '',
    doc,
  };
}

function toItem<D>(r: JournalRecord<D, string>): Record<string, ddb.AttributeValue> {
  const item: Record<string, ddb.AttributeValue> = {
    pk: S(r.key), sk: S(r.id), state: S(r.state), version: N(r.version), updatedAt: S(r.updatedAt), doc: S(JSON.stringify(r.doc)),
  };
  if (r.physicalId !== undefined) item.physicalId = S(r.physicalId);
  return item;
}

/**
 * A record ID that sorts by creation time, by `clock`: the clock of the resource leases, whose `requestSince` the ID is
 * compared with (lease.ts, `madeSince`).
 */
function newRecordId(clock: () => number): string {
  return `${new Date(clock()).toISOString()}#${randomBytes(4).toString('hex')}`;
}

export { conditionFailed } from './journal-locks';

/** The journal in DynamoDB. */
export function dynamoJournal(opts: JournalOptions): Journal {
  const { client: c, table, sdk: m, run } = openJournalTable(opts);

  return {
    records: <D>(key: string) => run(async () => {
      const out: JournalRecord<D>[] = [];
      let start: Record<string, ddb.AttributeValue> | undefined;
      do {
        const page: ddb.QueryCommandOutput = await c.send(new m.QueryCommand({
          TableName: table,
          KeyConditionExpression: 'pk = :k',
          ExpressionAttributeValues: { ':k': S(key) },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }));
        for (const item of page.Items ?? []) out.push(fromItem<D>(item));
        start = page.LastEvaluatedKey;
      } while (start);
      return out;
    }),
    create: <D, S extends string = string>(key: string, state: S, doc: D, physicalId?: string) => run(async () => {
      const id = newRecordId(opts.now ?? Date.now);
      const rec: JournalRecord<D, S> = { key, id, state, physicalId, version: 1, updatedAt: new Date().toISOString(), doc };
      await c.send(new m.PutItemCommand({ TableName: table, Item: toItem(rec), ConditionExpression: 'attribute_not_exists(pk)' }));
      return rec;
    }),
    save: <D, S extends string = string>(rec: JournalRecord<D, S>, state: S, doc: D, physicalId?: string) => run(async () => {
      const next: JournalRecord<D, S> = {
        ...rec, state, doc, physicalId: physicalId ?? rec.physicalId, version: rec.version + 1, updatedAt: new Date().toISOString(),
      };
      try {
        await c.send(new m.PutItemCommand({
          TableName: table,
          Item: toItem(next),
          ConditionExpression: 'version = :v',
          ExpressionAttributeValues: { ':v': N(rec.version) },
        }));
      } catch (e) {
        if (conditionFailed(e)) {
          throw new HandlerError(`journal record ${rec.key} (${rec.id}) was changed by another invocation meanwhile; deploy again`);
        }
        throw e;
      }
      return next;
    }),
    claim: (kind: string, id: string, owner: string) => run(async () => {
      const pk = `claim#${kind}#${id}`;
      try {
        await c.send(new m.PutItemCommand({
          TableName: table,
          Item: { pk: S(pk), sk: S('claim'), owner: S(owner), updatedAt: S(new Date().toISOString()) },
          ConditionExpression: 'attribute_not_exists(pk) OR #o = :o',
          ExpressionAttributeNames: { '#o': 'owner' },
          ExpressionAttributeValues: { ':o': S(owner) },
        }));
        return owner;
      } catch (e) {
        if (!conditionFailed(e)) throw e;
        const got = await c.send(new m.GetItemCommand({ TableName: table, Key: { pk: S(pk), sk: S('claim') }, ConsistentRead: true }));
        return got.Item?.owner?.S ?? owner;
      }
    }),
    transfer: (kind: string, id: string, from: string, to: string) => run(async () => {
      try {
        await c.send(new m.PutItemCommand({
          TableName: table,
          Item: { pk: S(`claim#${kind}#${id}`), sk: S('claim'), owner: S(to), updatedAt: S(new Date().toISOString()) },
          ConditionExpression: '#o = :o',
          ExpressionAttributeNames: { '#o': 'owner' },
          ExpressionAttributeValues: { ':o': S(from) },
        }));
        return true;
      } catch (e) {
        if (conditionFailed(e)) return false;
        throw e;
      }
    }),
    scan: (prefix?: string) => run(async () => {
      const records: JournalRecord<unknown>[] = [];
      const claims: JournalClaim[] = [];
      let start: Record<string, ddb.AttributeValue> | undefined;
      do {
        const page: ddb.ScanCommandOutput = await c.send(new m.ScanCommand({ TableName: table, ConsistentRead: true, ExclusiveStartKey: start }));
        for (const item of page.Items ?? []) {
          const pk = item.pk?.S ?? '';
          if (pk.startsWith('inflight#') || pk.startsWith(LEASE_PREFIX) || pk.startsWith(BUDGET_PREFIX)) continue;
          if (pk.startsWith('claim#')) {
            const m2 = /^claim#([^#]+)#(.*)$/.exec(pk);
            if (m2) claims.push({ kind: m2[1], id: m2[2], owner: item.owner?.S ?? '' });
          } else if (!prefix || pk.startsWith(prefix)) {
            records.push(fromItem<unknown>(item));
          }
        }
        start = page.LastEvaluatedKey;
      } while (start);
      records.sort((a, b) => (a.key === b.key ? (a.id < b.id ? -1 : 1) : a.key < b.key ? -1 : 1));
      return { records, claims };
    }),
    ...dynamoCreatesLocks({ client: c, table, sdk: m, run }),
    owners: (kind: string, ids: string[]) => run(async () => {
      const out = new Map<string, string>();
      for (let i = 0; i < ids.length; i += 100) {
        let keys: Array<Record<string, ddb.AttributeValue>> | undefined = ids.slice(i, i + 100)
          .map((id) => ({ pk: S(`claim#${kind}#${id}`), sk: S('claim') }));
        for (let round = 0; keys && keys.length > 0 && round < 10; round++) {
          const got: ddb.BatchGetItemCommandOutput = await c.send(new m.BatchGetItemCommand({
            RequestItems: { [table]: { Keys: keys, ConsistentRead: true } },
          }));
          for (const item of got.Responses?.[table] ?? []) {
            out.set(item.pk.S!.slice(`claim#${kind}#`.length), item.owner?.S ?? '');
          }
          keys = got.UnprocessedKeys?.[table]?.Keys;
          if (keys && keys.length > 0) await opts.sleep(100 * (round + 1));
        }
        // An unread claim must never read as "unclaimed".
        if (keys && keys.length > 0) throw new HandlerError(`${keys.length} claims could not be read (DynamoDB left them unprocessed); deploy again`);
      }
      return out;
    }),
  };
}
