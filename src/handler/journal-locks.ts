/**
 * The creates locks of the lifecycle journal (src/handler/creates.ts; docs/handler.md, "Ownership"): at most one
 * creating call of a kind (e.g. `sub#3001`, product-3001 subscriptions) or of one part of a kind (one remote
 * identity's subscriptions of the product) has no recorded outcome at a time, per journal.
 *
 * Items: `pk` = `inflight#<kind>`; `sk` = `lock` (the whole kind) or `lock#<part>` (one part); attributes `member`
 * (`<resource key>|<record ID>`) and `startedAt`. A whole lock excludes every part, a part lock only its own part.
 * Each side writes its own item first and then reads the other side's with a strongly consistent read, so a whole and
 * a part never both go on: a part that finds the whole held withdraws its item; a whole that finds a part held keeps
 * its item (new parts withdraw) and reports the part, and the caller asks again until the parts are done. A part reads
 * the whole first and writes nothing while it is held, so parts that wait never keep a waiting whole out. A lock whose
 * time is unreadable or more than a minute ahead of this clock is as stale as an old one; a whole removes the stale
 * parts it reads, so they do not pile up.
 *
 * Facts (`sk` = `fact#<name>`, attribute `value`) are kept beside the locks: e.g. that the service narrows its lists to
 * an identity (narrowing.ts).
 */
import type * as ddb from '@aws-sdk/client-dynamodb';

/** The holder of a creates lock: `member` (`<resource key>|<record ID>`) since `startedAt` (ISO). */
export interface InflightMark {
  readonly member: string;
  readonly startedAt: string;
}

/** Takes and releases the creates locks (see `Journal.lock` and `Journal.unlock`). */
export interface CreatesLocks {
  lock(kind: string, member: string, staleBefore: string, part?: string): Promise<InflightMark | undefined>;
  unlock(kind: string, member: string, part?: string): Promise<void>;
  fact(kind: string, name: string): Promise<string | undefined>;
  setFact(kind: string, name: string, value: string, expected?: string | null): Promise<boolean>;
  dropFact(kind: string, name: string): Promise<void>;
}

/** What the locks need of the journal table (`JournalTable` of journal.ts). */
export interface LockTable {
  readonly client: ddb.DynamoDBClient;
  readonly table: string;
  readonly sdk: typeof import('@aws-sdk/client-dynamodb');
  run<T>(fn: () => Promise<T>): Promise<T>;
}

const S = (v: string): ddb.AttributeValue => ({ S: v });
const WHOLE = 'lock';
const PART = 'lock#';
const FACT = 'fact#';
/** How far ahead of this clock a lock's time may be (clocks differ a little) before it reads as planted, hence stale. */
const AHEAD_MS = 60_000;

/** The lock and unlock operations of the journal table `t`. */
export function dynamoCreatesLocks(t: LockTable): CreatesLocks {
  const { client: c, table, sdk: m, run } = t;
  const keyOf = (kind: string, part?: string): Record<string, ddb.AttributeValue> =>
    ({ pk: S(`inflight#${kind}`), sk: S(part === undefined ? WHOLE : `${PART}${part}`) });
  const markOf = (item: Record<string, ddb.AttributeValue> | undefined): InflightMark =>
    ({ member: item?.member?.S ?? '', startedAt: item?.startedAt?.S ?? '' });
  // Another resource's lock that is not stale (a resource's own earlier invocation never runs beside it).
  const live = (item: Record<string, ddb.AttributeValue>, member: string, staleBefore: string): boolean =>
    fresh(item.startedAt?.S, staleBefore) && !(item.member?.S ?? '').startsWith(resourcePrefix(member));

  const put = async (kind: string, member: string, staleBefore: string, part?: string, retry = true): Promise<InflightMark | undefined> => {
    const key = keyOf(kind, part);
    try {
      await c.send(new m.PutItemCommand({
        TableName: table,
        Item: { ...key, member: S(member), startedAt: S(new Date().toISOString()) },
        // Also taken over from an earlier invocation of the same resource (its events never run at once): a killed
        // invocation's lock must not hold up the next deploy of that resource. A time ahead of this clock (planted) or
        // none is taken over like a stale one (any other unreadable time: below).
        ConditionExpression: 'attribute_not_exists(pk) OR #m = :m OR startedAt < :stale OR startedAt > :ahead '
          + 'OR attribute_not_exists(startedAt) OR begins_with(#m, :resource)',
        ExpressionAttributeNames: { '#m': 'member' },
        ExpressionAttributeValues: {
          ':m': S(member), ':stale': S(staleBefore), ':ahead': S(new Date(Date.now() + AHEAD_MS).toISOString()), ':resource': S(resourcePrefix(member)),
        },
      }));
      return undefined;
    } catch (e) {
      if (!conditionFailed(e)) throw e;
      const held = (await c.send(new m.GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
      if (held === undefined && retry) return put(kind, member, staleBefore, part, false);
      // A time that is no time (a number, a string that does not parse): stale; removed, then taken once more.
      if (held !== undefined && retry && !fresh(held.startedAt?.S, staleBefore)) {
        await removeStale(held);
        return put(kind, member, staleBefore, part, false);
      }
      return markOf(held);
    }
  };

  const remove = async (kind: string, member: string, part?: string): Promise<void> => {
    try {
      await c.send(new m.DeleteItemCommand({
        TableName: table,
        Key: keyOf(kind, part),
        ConditionExpression: '#m = :m',
        ExpressionAttributeNames: { '#m': 'member' },
        ExpressionAttributeValues: { ':m': S(member) },
      }));
    } catch (e) {
      if (!conditionFailed(e)) throw e;
    }
  };

  /** Removes a stale part (unless it was taken anew meanwhile). */
  const removeStale = async (item: Record<string, ddb.AttributeValue>): Promise<void> => {
    try {
      await c.send(new m.DeleteItemCommand({
        TableName: table,
        Key: { pk: item.pk, sk: item.sk },
        ConditionExpression: `(#m = :m OR attribute_not_exists(#m)) AND ${item.startedAt === undefined ? 'attribute_not_exists(startedAt)' : 'startedAt = :t'}`,
        ExpressionAttributeNames: { '#m': 'member' },
        ExpressionAttributeValues: { ':m': item.member ?? S(''), ...(item.startedAt !== undefined ? { ':t': item.startedAt } : {}) },
      }));
    } catch (e) {
      if (!conditionFailed(e)) throw e;
    }
  };

  /** The whole lock of `kind` when another resource holds it (not stale). */
  const wholeHeld = async (kind: string, member: string, staleBefore: string): Promise<InflightMark | undefined> => {
    const whole = (await c.send(new m.GetItemCommand({ TableName: table, Key: keyOf(kind), ConsistentRead: true }))).Item;
    return whole !== undefined && live(whole, member, staleBefore) ? markOf(whole) : undefined;
  };

  /** The first part of `kind` another resource holds (not stale), read strongly consistent over every page. */
  const partHeld = async (kind: string, member: string, staleBefore: string): Promise<InflightMark | undefined> => {
    let start: Record<string, ddb.AttributeValue> | undefined;
    do {
      const page: ddb.QueryCommandOutput = await c.send(new m.QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :k AND begins_with(sk, :part)',
        ExpressionAttributeValues: { ':k': keyOf(kind).pk, ':part': S(PART) },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }));
      for (const item of page.Items ?? []) {
        if (live(item, member, staleBefore)) return markOf(item);
        if (!fresh(item.startedAt?.S, staleBefore)) await removeStale(item);
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return undefined;
  };

  return {
    lock: (kind, member, staleBefore, part) => run(async () => {
      if (part === undefined) return await put(kind, member, staleBefore) ?? partHeld(kind, member, staleBefore);
      // A part writes nothing while the whole is held (a waiting whole then never meets waiting parts' items)...
      const first = await wholeHeld(kind, member, staleBefore);
      if (first !== undefined) return first;
      const holder = await put(kind, member, staleBefore, part);
      if (holder !== undefined) return holder;
      // ...and withdraws when a whole was written between that read and its own write.
      const whole = await wholeHeld(kind, member, staleBefore);
      if (whole === undefined) return undefined;
      await remove(kind, member, part);
      return whole;
    }),
    unlock: (kind, member, part) => run(() => remove(kind, member, part)),
    fact: (kind, name) => run(async () => {
      const got = await c.send(new m.GetItemCommand({ TableName: table, Key: { pk: keyOf(kind).pk, sk: S(`${FACT}${name}`) }, ConsistentRead: true }));
      return got.Item?.value?.S;
    }),
    dropFact: (kind, name) => run(async () => {
      await c.send(new m.DeleteItemCommand({ TableName: table, Key: { pk: keyOf(kind).pk, sk: S(`${FACT}${name}`) } }));
    }),
    setFact: (kind, name, value, expected) => run(async () => {
      // With `expected`: only over that value (null: only where there is none), so a fact read and judged is not
      // overwritten by what another container wrote meanwhile.
      // (`fact` reads only a string value: an item without one, or with another type, counts as no fact.)
      const cond: Partial<ddb.PutItemCommandInput> = expected === undefined ? {} : expected === null
        ? { ConditionExpression: 'attribute_not_exists(pk) OR NOT attribute_type(#v, :s)', ExpressionAttributeNames: { '#v': 'value' }, ExpressionAttributeValues: { ':s': S('S') } }
        : { ConditionExpression: '#v = :v', ExpressionAttributeNames: { '#v': 'value' }, ExpressionAttributeValues: { ':v': S(expected) } };
      try {
        await c.send(new m.PutItemCommand({
          TableName: table, Item: { pk: keyOf(kind).pk, sk: S(`${FACT}${name}`), value: S(value), at: S(new Date().toISOString()) }, ...cond,
        }));
        return true;
      } catch (e) {
        if (conditionFailed(e)) return false;
        throw e;
      }
    }),
  };
}

/** Whether a lock's time is at or after `staleBefore` and not ahead of this clock (a planted time is stale). */
function fresh(startedAt: string | undefined, staleBefore: string): boolean {
  const t = Date.parse(startedAt ?? '');
  return Number.isFinite(t) && t >= Date.parse(staleBefore) && t <= Date.now() + AHEAD_MS;
}

function resourcePrefix(member: string): string {
  return `${member.split('|')[0]}|`;
}

/** Whether a DynamoDB error is a failed condition. */
export function conditionFailed(e: unknown): boolean {
  return (e as { name?: string }).name === 'ConditionalCheckFailedException';
}
