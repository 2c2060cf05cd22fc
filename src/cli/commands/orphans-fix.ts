/**
 * `dpi orphans --fix`: orphans are ended the way a Delete would, by running the handler's own Delete in process
 * (`RemovalPolicy: 'destroy'`); retained records are released, never ended: the handler's Delete with
 * `RemovalPolicy: 'retain'` (journal state `released`, no call that ends anything; an adopted record gets back what
 * the adoption changed where the handler can), or the journal alone where the handler has nothing to restore; refused
 * and unresolved records are skipped.
 */
import { DONE, Doc, Orphan, Rec, shortType } from './orphans-judge';

import type { Journal } from '../../handler/journal';
import { isKindType, KINDS, kindsInFixOrder } from '../../kinds';
import { CLI_HOOKS } from '../../kinds/registry/cli';
import { HandlerModule, invokeWithContext } from '../../local/handler';
import { recordedEnvironment } from '../../local/provider-env';
import { LocalState, writeState } from '../../local/state';
import { RunContext } from '../context';
import { journalKeyOf } from '../deployed';
import { CliError } from '../errors';

/** Removal order: what hangs off a subscription first, subscriptions last. */
const FIX_ORDER: string[] = kindsInFixOrder().map((k) => k.type);

/** The resource types whose Delete takes the `RemovalPolicy` property (the handler releases on `retain`). */
const WITH_REMOVAL_POLICY = new Set<string>(KINDS.filter((k) => k.removalPolicy).map((k) => k.type));

/** The `Connection` property of the Delete events: the CLI's addresses and token (through the handler's secret seam). */
function connectionProperty(urls: Record<string, string>, table: string, recorded: unknown): Record<string, unknown> {
  const prev = recorded && typeof recorded === 'object' ? recorded as Record<string, unknown> : {};
  const keep = Object.fromEntries(['AccountId', 'UserId', 'PipelineSubscriptionsKey', 'PipelineMetaKey']
    .filter((k) => typeof prev[k] === 'string' && prev[k] !== '').map((k) => [k, prev[k]]));
  return {
    ...keep,
    BaseUrl: urls.baseUrl,
    SubscriptionsUrl: urls.subscriptionsUrl,
    AccountUrl: urls.accountUrl,
    UserUrl: urls.userUrl,
    RemoteIdentityUrl: urls.remoteIdentityUrl,
    AuthUrl: urls.authUrl,
    RefreshTokenSecretArn: 'arn:aws:secretsmanager:local:000000000000:secret:dpi-orphans',
    // The table the records were judged in, never one a recorded property names (the Delete must act on what was judged).
    JournalTableName: table,
  };
}

/** The properties a Delete of the record needs (the recorded ones when the local state has them, else from the journal). */
function deleteProperties(o: Orphan, rec: Rec): Record<string, unknown> {
  if (o.properties) return { ...o.properties };
  return isKindType(o.type) ? CLI_HOOKS[o.type].deleteProperties(o, rec.doc) : {};
}

/** Attempt states the handler's Delete leaves as they are when it cannot tell what the attempt made. */
const UNRESOLVED: ReadonlySet<string> = new Set<string>(KINDS.flatMap((k) => k.undecidedStates));

export interface FixOutcome {
  key: string;
  record: string;
  result: 'removed' | 'released' | 'skipped' | 'failed';
  detail?: string;
}

export interface FixOptions {
  /** Every listed record (orphans, retained, refused). */
  orphans: Orphan[];
  records: Map<string, Rec>;
  journal: Journal;
  journalEndpoint?: string;
  urls: Record<string, string>;
  token: string;
  table: string;
  handlerLog?: string;
  echo: boolean;
  /** The handler module (the bundled handler; a fake in tests). */
  loadHandler: () => HandlerModule;
}

/**
 * Runs the handler's Delete for every orphan and every retained record the handler releases (grouped per resource key,
 * physical ID and verdict), then closes the records: `deleted` for orphans, `released` for retained ones.
 */
export async function fix(ctx: RunContext, opts: FixOptions): Promise<FixOutcome[]> {
  // The in-process handler opens the judged table as one it never creates (a fix creates no journal table): the
  // environment it is given (recordedEnvironment) asks for no table to be created.
  return fixWithHandler(ctx, opts);
}

async function fixWithHandler(ctx: RunContext, opts: FixOptions): Promise<FixOutcome[]> {
  const outcomes: FixOutcome[] = [];
  /** Keys whose Delete logged the refresh token (replaced by *** before it reached the log file or the terminal). */
  const leaks = new Set<string>();
  const viaHandler: Orphan[] = [];
  const journalOnly: Orphan[] = [];
  for (const o of opts.orphans) {
    if (o.verdict === 'refused') {
      outcomes.push({ key: o.key, record: o.record, result: 'skipped', detail: `refused (${o.refused}): the connection's account cannot read it; nothing done` });
    } else if (o.verdict === 'retained') {
      // The handler releases what CloudFormation had (a physical ID) of the types that take a removal policy; anything
      // else is released in the journal alone (no Delete that could end it).
      (o.physicalId !== undefined && WITH_REMOVAL_POLICY.has(o.type) ? viaHandler : journalOnly).push(o);
    } else if (o.unresolved) {
      outcomes.push({ key: o.key, record: o.record, result: 'skipped', detail: o.unresolved });
    } else {
      viaHandler.push(o);
    }
  }
  for (const o of journalOnly) {
    ctx.io.stderr.write(`releasing ${o.key} (${shortType(o.type)}, ${o.physicalId ?? 'no physical ID'}): journal only...\n`);
    outcomes.push(await release(opts.journal, o));
  }
  if (viaHandler.length === 0) return outcomes;
  const handler = opts.loadHandler();
  if (typeof handler.configureLocalRuntime !== 'function') {
    throw new CliError('the handler bundle does not export configureLocalRuntime: rebuild it with \'npx projen bundle\'');
  }
  const token = opts.token;
  handler.configureLocalRuntime({
    readSecret: async () => token,
    callerAccountId: async () => {
      throw new Error('dpi orphans --fix runs Deletes only (no AWS account is read)');
    },
    journalEndpoint: opts.journalEndpoint,
    // What the in-process handler serves (src/handler/binding.ts): the CLI's connection and the stacks of the keys it fixes.
    environment: recordedEnvironment(connectionProperty(opts.urls, opts.table, {}), [...new Set(viaHandler.map((o) => o.key.split('/')[0]))]),
  });
  // One Delete per resource key, physical ID and verdict (a placeholder for a key's attempts without one).
  const groups = new Map<string, { physicalId: string; orphans: Orphan[] }>();
  const order = (t: string): number => (FIX_ORDER.includes(t) ? FIX_ORDER.indexOf(t) : FIX_ORDER.length);
  for (const o of [...viaHandler].sort((a, b) => order(a.type) - order(b.type))) {
    const physical = o.madeHistory ?? o.physicalId ?? `dpi-orphans:${o.record}`;
    const gk = `${o.verdict}|${o.key}|${o.physicalId === undefined && !o.madeHistory ? '(attempts)' : physical}`;
    const g = groups.get(gk) ?? { physicalId: physical, orphans: [] };
    g.orphans.push(o);
    groups.set(gk, g);
  }
  for (const { physicalId, orphans } of groups.values()) {
    const o = orphans[0];
    const retain = o.verdict === 'retained';
    const rec = opts.records.get(`${o.key}#${o.record}`)!;
    const [stack, ...rest] = o.key.split('/');
    const props = deleteProperties(o, rec);
    const event = {
      RequestType: 'Delete' as const,
      ServiceToken: 'arn:aws:lambda:local:000000000000:function:dpi-orphans',
      ResponseURL: 'local',
      StackId: `arn:aws:cloudformation:local:000000000000:stack/${stack}/dpi-orphans`,
      RequestId: `dpi-orphans-${o.record}`,
      LogicalResourceId: rest.join('/'),
      ResourceType: o.type,
      PhysicalResourceId: physicalId,
      ResourceProperties: {
        ...props,
        // The verdict decides, whatever the recorded properties say: retained records are released, orphans ended.
        RemovalPolicy: retain ? 'retain' : 'destroy',
        JournalKey: o.key,
        Connection: connectionProperty(opts.urls, opts.table, props.Connection),
      },
    };
    if (o.madeHistory !== undefined && !retain) {
      // The lookup proved the attempt made it: claimed for the resource first, so the handler's Delete may end it.
      const owner = await opts.journal.claim('history', o.madeHistory, o.key);
      if (owner !== o.key) {
        for (const x of orphans) outcomes.push({ key: x.key, record: x.record, result: 'failed', detail: `history request ${o.madeHistory} is claimed by ${owner}` });
        continue;
      }
    }
    ctx.io.stderr.write(`${retain ? 'releasing' : 'removing'} ${o.key} (${shortType(o.type)}, ${physicalId})...\n`);
    try {
      await deleteWaitingForTurns(ctx, o.key, () => invokeWithContext(`${stack}-dpi-orphans`, event.ServiceToken, INVOCATION_MS,
        { file: opts.handlerLog, echo: opts.echo, secrets: [token], onSecret: () => leaks.add(o.key) }, (c) => handler.onEvent(event, c)));
    } catch (e) {
      for (const x of orphans) outcomes.push({ key: x.key, record: x.record, result: 'failed', detail: (e as Error).message });
      continue;
    }
    if (retain) {
      for (const x of orphans) outcomes.push(await release(opts.journal, x));
      continue;
    }
    // What a Delete leaves: the records it removed are `deleted` (order jobs have no service delete: marked here too).
    const now = await opts.journal.records<Doc>(o.key);
    for (const x of orphans) {
      const cur = now.find((r) => r.id === x.record);
      if (cur && UNRESOLVED.has(cur.state)) {
        // The handler could not tell what the attempt made (it ends nothing on a guess): the record stays as it is.
        outcomes.push({
          key: x.key,
          record: x.record,
          result: 'skipped',
          detail: `unresolved (${cur.state}): what the attempt made cannot be told; nothing done (see dpi journal resolve ${x.key})`,
        });
        continue;
      }
      if (cur && !DONE.has(cur.state)) {
        await opts.journal.save(cur, 'deleted', { ...cur.doc, removedBy: 'dpi orphans --fix', removedAt: new Date().toISOString() });
      }
      outcomes.push({ key: x.key, record: x.record, result: 'removed' });
    }
  }
  if (leaks.size > 0) {
    ctx.io.stderr.write(`dpi orphans --fix: the handler logged the refresh token while fixing ${[...leaks].join(', ')} `
      + '(replaced by *** in its log): a bug of the library, please report it\n');
  }
  return outcomes;
}

/** How long one in-process run of the handler's Delete may take (a Lambda's 10 minutes). */
const INVOCATION_MS = 600_000;
/** How many times a Delete whose turn in the service's rate limit came after its run's deadline runs again. */
export const RATE_LIMIT_RUNS = 3;
/**
 * A failure of the handler's Delete whose next call waited past its run's deadline for the service's rate limit (a
 * 429's wait, its turn in the request budget): nothing of that call was sent, and what the Delete did is in the journal.
 * Behind CloudFormation such a Delete continues in isComplete; `dpi` has no waiter, so it runs the same event again.
 */
const WAITED_PAST_DEADLINE = /deadline reached (before the request was sent|after \d+ attempt|\(while taking its turn)|past this invocation's deadline/;

/**
 * Runs a Delete; when its next call waited past the run's deadline for the service's rate limit, runs the same event
 * again (a duplicate delivery to the handler: it goes on from what the journal says it did), up to RATE_LIMIT_RUNS
 * times, then fails saying why and what to run.
 */
async function deleteWaitingForTurns(ctx: RunContext, key: string, run: () => Promise<unknown>): Promise<void> {
  for (let round = 1; ; round++) {
    try {
      await run();
      return;
    } catch (e) {
      const message = (e as Error).message;
      if (!WAITED_PAST_DEADLINE.test(message)) throw e;
      if (round >= RATE_LIMIT_RUNS) {
        throw new CliError(`the service's rate limit did not give its Delete a turn within ${round} runs of ${INVOCATION_MS / 60_000} minutes `
          + `(${message.replace(/[.\s]+$/, '')}); nothing is half-ended: what it did is in the lifecycle journal and the next run goes on from `
          + 'there. Run \'dpi orphans --fix\' again once the deploys and tools that share the account\'s rate limit have finished');
      }
      ctx.io.stderr.write(`${key}: the service's rate limit gives the Delete's next call its turn after this run's ${INVOCATION_MS / 60_000} minutes: `
        + `running it again (${round + 1} of ${RATE_LIMIT_RUNS}; what it did is in the journal)\n`);
    }
  }
}

/**
 * Closes a retained record as `released` (after the handler's release, or instead of it). A record the handler ended
 * (`deleted`) is a failure to report: a retained record must never be ended.
 */
async function release(journal: Journal, o: Orphan): Promise<FixOutcome> {
  const cur = (await journal.records<Doc>(o.key)).find((r) => r.id === o.record);
  if (cur?.state === 'deleted') {
    return {
      key: o.key,
      record: o.record,
      result: 'failed',
      detail: 'the handler\'s Delete with RemovalPolicy retain ended the record instead of releasing it (a handler bundle older than this dpi?)',
    };
  }
  if (cur && !DONE.has(cur.state)) {
    await journal.save(cur, 'released', { ...cur.doc, releasedBy: 'dpi orphans --fix', releasedAt: new Date().toISOString() });
  }
  return { key: o.key, record: o.record, result: 'released', detail: 'kept in the service' };
}

/** The local state's clean-up list no longer names the physical resources --fix removed or released. */
export function dropFixedCleanups(file: string, state: LocalState, orphans: Orphan[], outcomes: FixOutcome[], forbidden: string[]): void {
  const done = new Set(outcomes.filter((x) => x.result === 'removed' || x.result === 'released').map((x) => `${x.key}#${x.record}`));
  const gone = new Set(orphans.filter((o) => done.has(`${o.key}#${o.record}`) && o.physicalId !== undefined).map((o) => `${o.key}|${o.physicalId}`));
  const kept = state.orphans.filter((o) => !gone.has(`${journalKeyOf(o.stack, o.logicalId, o.properties)}|${o.physicalId}`));
  if (kept.length === state.orphans.length) return;
  writeState(file, { ...state, orphans: kept }, forbidden);
}
