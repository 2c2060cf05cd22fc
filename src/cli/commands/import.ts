import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command } from 'commander';
import { DpiClient, ProductRecord, Subscription } from '../../client';
import { addConnectionOptions, ConnectionFlags } from '../connection';
import { addJsonOption, connectFor, printJson, RunContext } from '../context';
import { CliError, printable, toCliError } from '../errors';
import { commentText, idCode, POSITIVE_ID, tsString as lit } from './import-code';
import {
  checkPipelineRoles, ImportedPipeline, importedPipeline, parsePipelineRoles, pipelineHeader, pipelineHelpers, pipelineImports,
  pipelinePlaceholders, PipelineRolesSpec, renderPipelineFleet,
} from './import-pipelines';

/** The product of unified notification pipelines and of legacy ones. */
const UNIFIED_PIPELINE_PRODUCT = 107;
const LEGACY_PIPELINE_PRODUCT = 86;

/** The package the generated file imports the constructs from (`--module`). */
export const DEFAULT_IMPORT_MODULE = 'data-pipeline-integration-cdk';

/** One subscription the generated stack adopts. */
export interface ImportedSubscription {
  readonly subscriptionId: string;
  readonly productId: number;
  readonly productName?: string;
  readonly remoteIdentityId?: number;
  readonly storageGroupId?: number;
  readonly name?: string;
  readonly status: 'active' | 'paused';
  /** The stored `stage_ids` (shown by the vendor's parameter reads only). */
  readonly stageIds?: number[];
  /** The other stored parameters (shown by the vendor's parameter reads only; `remote_identity_id` left out). */
  readonly productParameters?: Record<string, string>;
}

/** A record `dpi import` read but does not declare, and why. */
export interface NotImported {
  readonly subscriptionId: string;
  readonly productId?: number;
  readonly reason: string;
}

/** What `dpi import` read (also its `--json`). */
export interface ImportModel {
  readonly subscriptions: ImportedSubscription[];
  readonly notImported: NotImported[];
  /** Declared properties that no read of the service shows; adoption leaves them as the service stores them. */
  readonly notShown: string[];
  /** With `--pipeline-roles`: the unified pipelines, adopted by one `NotificationPipelineFleet`. */
  readonly pipelines?: ImportedPipeline[];
  /** With `--pipeline-roles`: the roles the fleet uses. */
  readonly pipelineRoles?: PipelineRolesSpec;
  /** With `--pipeline-roles`: the pipelines' values no read shows (placeholders that fail the synth). */
  readonly pipelinePlaceholders?: string[];
}

/** The read fields a subscription must show for `dpi import` (the spec shows only `id` and `status`). */
const NEEDED_FIELDS: Array<keyof Subscription> = ['product', 'remote_identity', 'storage_group', 'name'];

/**
 * What a pipeline's declaration needs and no read shows, not even the vendor's: its roles and account type (the
 * stored parameters show its types and region at most; the roles it was created with are stored nowhere).
 */
export const PIPELINE_FIELDS_NOT_SHOWN = ['roles (role_arn, eb_to_fh_role_arn)', 'accountType'];

/** Stored parameters by subscription ID (`DpiClient.parameters.bulk`); undefined when the service does not show them. */
export type StoredParameters = ReadonlyMap<string, Record<string, string>> | undefined;

/** `stage_ids` as stage IDs; undefined when absent or not an array of integers of 1000 and above. */
function stageIdsOf(raw: string | undefined): number[] | undefined {
  if (raw === undefined) return undefined;
  try {
    const v = JSON.parse(raw) as unknown;
    return Array.isArray(v) && v.length > 0 && v.every((x) => Number.isSafeInteger(x) && (x as number) >= 1000) ? v as number[] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Builds the model from the account's subscriptions. Throws a CliError (exit 2) naming the fields the reads do not show
 * (the spec's reads: only `id` and `status`), or, unless `skipPipelines`, the unified pipelines whose selection no
 * read shows: never code that would be wrong.
 */
export function importModel(subs: Subscription[], products: ProductRecord[], opts: {
  skipPipelines?: boolean;
  stored?: StoredParameters;
  /** `--pipeline-roles`: declare the unified pipelines as one fleet. */
  pipelineRoles?: PipelineRolesSpec;
  /** Remote identity types (17 seller, 18 vendor) by identity ID; undefined when the reads do not show them. */
  identityTypes?: ReadonlyMap<string, number>;
} = {}): ImportModel {
  const live = subs.filter((s) => s.status === 'active' || s.status === 'paused').sort((a, b) => Number(a.id) - Number(b.id));
  const missing = new Map<string, string[]>();
  for (const s of live) {
    const m = NEEDED_FIELDS.filter((f) => s[f] === undefined).map(String);
    if (m.length > 0) missing.set(s.id, m);
  }
  if (missing.size > 0) {
    const fields = [...new Set([...missing.values()].flat())];
    const ids = [...missing.keys()];
    throw new CliError(`dpi import needs read fields the service's interface does not show: ${fields.join(', ')} of ${ids.length} `
      + `subscription${ids.length > 1 ? 's' : ''} (${ids.slice(0, 10).join(', ')}${ids.length > 10 ? ', ...' : ''}) were not in the answer `
      + '(the spec shows only id and status; the vendor\'s reads show them); nothing was written');
  }
  // What the service answered is written into code: an ID that is not a positive decimal integer fails the import
  // naming it (nothing is written), whichever record it is in.
  const optionalId = (v: unknown, what: string): number | undefined => (v === undefined || v === null || v === '' ? undefined : Number(idCode(v, what)));
  for (const s of live) {
    const id = idCode(s.id, 'the subscription ID');
    idCode(s.product, `the product of subscription ${id}`);
    optionalId(s.remote_identity, `the remote identity of subscription ${id}`);
    optionalId(s.storage_group, `the storage group of subscription ${id}`);
  }
  const byId = new Map(products.map((p) => [Number(p.id), p]));
  const subscriptions: ImportedSubscription[] = [];
  const notImported: NotImported[] = [];
  const pipelines: string[] = [];
  const adoptedPipelines: ImportedPipeline[] = [];
  for (const s of live) {
    const product = Number(s.product);
    if (product === UNIFIED_PIPELINE_PRODUCT && opts.pipelineRoles) {
      if (!POSITIVE_ID.test(String(s.remote_identity ?? ''))) {
        notImported.push({ subscriptionId: s.id, productId: product, reason: 'unified notification pipeline whose subscription shows no remote identity' });
      } else {
        adoptedPipelines.push(importedPipeline(s, opts.stored?.get(String(s.id)), opts.identityTypes));
      }
      continue;
    }
    if (product === UNIFIED_PIPELINE_PRODUCT) {
      pipelines.push(s.id);
      notImported.push({
        subscriptionId: s.id,
        productId: product,
        reason: `unified notification pipeline: no read shows its ${PIPELINE_FIELDS_NOT_SHOWN.join(', ')}; declare a NotificationPipeline with `
          + `existingSubscriptionId ${s.id} by hand (its adoption sends the unified update)`,
      });
      continue;
    }
    if (product === LEGACY_PIPELINE_PRODUCT) {
      notImported.push({
        subscriptionId: s.id,
        productId: product,
        reason: 'legacy notification pipeline: no read shows its queue or types; declare a LegacyNotificationPipeline by hand',
      });
      continue;
    }
    const num = (v: unknown): number | undefined => (v === undefined || v === null || v === '' ? undefined : Number(v));
    const stored = opts.stored?.get(String(s.id));
    // A stored stage_ids that is not a list of stage IDs (>= 1000) cannot be declared (stageIds refuses it, and so does
    // productParameters.stage_ids): left out, adoption keeps it as stored.
    const stageIds = stageIdsOf(stored?.stage_ids);
    const params = stored === undefined ? undefined : Object.fromEntries(Object.entries(stored)
      .filter(([k]) => k !== 'remote_identity_id' && k !== 'stage_ids').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    subscriptions.push({
      subscriptionId: s.id,
      productId: product,
      productName: byId.get(product)?.name,
      remoteIdentityId: num(s.remote_identity),
      storageGroupId: num(s.storage_group),
      name: typeof s.name === 'string' && s.name !== '' ? s.name : undefined,
      status: s.status === 'paused' ? 'paused' : 'active',
      ...(stageIds !== undefined ? { stageIds } : {}),
      ...(params !== undefined && Object.keys(params).length > 0 ? { productParameters: params } : {}),
    });
  }
  if (pipelines.length > 0 && !opts.skipPipelines) {
    throw new CliError(`dpi import cannot declare the unified notification pipeline${pipelines.length > 1 ? 's' : ''} ${pipelines.join(', ')}: `
      + `no read of the service shows a pipeline's ${PIPELINE_FIELDS_NOT_SHOWN.join(', ')}; run again with --skip-pipelines to write the `
      + 'other records (the pipelines are listed in the file), then declare each pipeline by hand with existingSubscriptionId; nothing was written');
  }
  const notShown = subscriptions.some((s) => !opts.stored?.has(s.subscriptionId)) ? ['productParameters', 'stageIds'] : [];
  if (!opts.pipelineRoles) return { subscriptions, notImported, notShown };
  checkPipelineRoles(adoptedPipelines, opts.pipelineRoles);
  return {
    subscriptions,
    notImported,
    notShown,
    pipelines: adoptedPipelines,
    pipelineRoles: opts.pipelineRoles,
    pipelinePlaceholders: pipelinePlaceholders(adoptedPipelines),
  };
}


/** Renders the stack class that declares the model's records with adoption set. */
export function renderImportedStack(model: ImportModel, opts: { className: string; module: string; source?: string }): string {
  const needsStatus = model.subscriptions.some((s) => s.status === 'paused');
  const out: string[] = [];
  out.push(`// Generated by \`dpi import\`${opts.source ? ` from ${commentText(opts.source)}` : ''}: ${model.subscriptions.length} `
    + `subscription${model.subscriptions.length === 1 ? '' : 's'} adopted with existingSubscriptionId.`);
  out.push('// Each record keeps its ID: a deploy takes it over without creating anything (see "Adopting existing records" in');
  if (model.notShown.length > 0) {
    out.push('// docs/constructs.md). productParameters and stageIds are not shown by the service\'s reads: the adopted subscriptions keep');
    out.push('// the values the service stores; declare them here to manage them (the next deploy sends them).');
  } else {
    out.push('// docs/constructs.md). stageIds and productParameters are the stored ones (the service\'s parameter reads show them).');
  }
  out.push('// removalPolicy RETAIN: removing a resource (or the stack) leaves the record in the service; change it to DESTROY to');
  out.push('// end the record with the resource.');
  const fleet = model.pipelineRoles && model.pipelines && model.pipelines.length > 0
    ? { roles: model.pipelineRoles, pipelines: model.pipelines } : undefined;
  if (fleet) out.push(...pipelineHeader(fleet.pipelines));
  for (const n of model.notImported) out.push(`// ${commentText(`Not imported: subscription ${n.subscriptionId} (product ${n.productId ?? '?'}): ${n.reason}.`)}`);
  out.push('import { RemovalPolicy, Stack, StackProps } from \'aws-cdk-lib\';');
  out.push('import { Construct } from \'constructs\';');
  const names = ['ServiceConnection', 'Subscription', ...(needsStatus ? ['SubscriptionStatus'] : []), ...(fleet ? pipelineImports(fleet.roles) : [])].sort();
  out.push(`import { ${names.join(', ')} } from ${lit(opts.module)};`);
  out.push('');
  out.push(`/** Properties of \`${opts.className}\`. */`);
  out.push(`export interface ${opts.className}Props extends StackProps {`);
  out.push('  /**');
  out.push('   * Makes the stack\'s connection to the service (the account the records were read from), e.g.');
  out.push('   * `(stack) => new ServiceConnection(stack, \'Dpi\', { endpoints: ServiceEndpoints.singleOrigin(url), refreshToken, journal })`.');
  out.push('   */');
  out.push('  readonly connection: (stack: Stack) => ServiceConnection;');
  out.push('}');
  out.push('');
  out.push('/** The service records of the account, adopted as they are. */');
  out.push(`export class ${opts.className} extends Stack {`);
  out.push(`  constructor(scope: Construct, id: string, props: ${opts.className}Props) {`);
  out.push('    super(scope, id, props);');
  out.push('    const connection = props.connection(this);');
  for (const s of model.subscriptions) {
    out.push('');
    out.push(`    // product ${s.productId}${s.productName ? ` (${commentText(s.productName)})` : ''}`);
    const id = idCode(s.subscriptionId, 'the subscription ID');
    out.push(`    new Subscription(this, ${lit(`Subscription${id}`)}, {`);
    out.push('      connection,');
    out.push(`      existingSubscriptionId: ${id},`);
    out.push(`      productId: ${idCode(s.productId, `the product of subscription ${id}`)},`);
    if (s.remoteIdentityId !== undefined) out.push(`      remoteIdentityId: ${idCode(s.remoteIdentityId, `the remote identity of subscription ${id}`)},`);
    if (s.storageGroupId !== undefined) out.push(`      storageGroupId: ${idCode(s.storageGroupId, `the storage group of subscription ${id}`)},`);
    if (s.name !== undefined) out.push(`      name: ${lit(s.name)},`);
    if (s.stageIds !== undefined) out.push(`      stageIds: [${s.stageIds.map((n) => idCode(n, `a stage ID of subscription ${id}`)).join(', ')}],`);
    if (s.productParameters !== undefined) {
      out.push('      productParameters: {');
      for (const [k, v] of Object.entries(s.productParameters)) out.push(`        ${/^[A-Za-z_$][\w$]*$/.test(k) ? k : lit(k)}: ${lit(v)},`);
      out.push('      },');
    }
    if (s.status === 'paused') out.push('      status: SubscriptionStatus.PAUSED,');
    out.push('      removalPolicy: RemovalPolicy.RETAIN,');
    out.push('    });');
  }
  if (fleet) out.push(...renderPipelineFleet(fleet.pipelines, fleet.roles));
  out.push('  }');
  out.push('}');
  if (fleet) out.push(...pipelineHelpers(fleet.pipelines, fleet.roles));
  return out.join('\n') + '\n';
}

interface ImportFlags extends ConnectionFlags {
  out?: string;
  className: string;
  module: string;
  json?: boolean;
  skipPipelines?: boolean;
  pipelineRoles?: string;
}

/** `dpi import [--out FILE] [--class-name NAME] [--json]` */
export function importCommand(ctx: RunContext): Command {
  const cmd = new Command('import')
    .description('write a CDK stack (TypeScript) that adopts the account\'s active and paused subscriptions with existingSubscriptionId '
      + '(needs the vendor\'s read fields; exit 2 naming what the reads do not show)')
    .option('--out <file>', 'write the TypeScript file here (default: print it)')
    .option('--class-name <name>', 'name of the generated Stack class', 'ImportedDpiStack')
    .option('--module <name>', 'module the generated file imports the constructs from', DEFAULT_IMPORT_MODULE)
    .option('--skip-pipelines', 'write the other records when the account has unified notification pipelines (listed in the file, not declared)')
    .option('--pipeline-roles <roles>', 'declare the unified notification pipelines as one NotificationPipelineFleet that adopts them, with these '
      + 'roles: \'<management role ARN>[,<event-bus role ARN>]\' or the construct path of an INotificationPipelineRoles construct of the app '
      + '(the first deploy sends one unified PATCH per pipeline)');
  addJsonOption(cmd);
  addConnectionOptions(cmd);
  return cmd.action(async (opts: ImportFlags) => {
    if (!/^[A-Z][A-Za-z0-9_]*$/.test(opts.className)) {
      throw new CliError(`--class-name '${opts.className}' is not a class name; use letters, digits and _ starting with a capital letter`);
    }
    const pipelineRoles = opts.pipelineRoles !== undefined ? parsePipelineRoles(opts.pipelineRoles) : undefined;
    const { client, origins } = connectFor(ctx, opts);
    let subs: Subscription[];
    let products: ProductRecord[];
    try {
      [subs, products] = await Promise.all([client.subscriptions.list(), client.products.list()]);
    } catch (e) {
      throw toCliError(e, { origins });
    }
    // The vendor's parameter reads (not in the spec): one bulk read per 100 subscriptions; not shown -> left out.
    let stored: StoredParameters;
    const ids = subs.filter((s) => (s.status === 'active' || s.status === 'paused') && POSITIVE_ID.test(String(s.id))
      && (Number(s.product) !== UNIFIED_PIPELINE_PRODUCT || pipelineRoles !== undefined) && Number(s.product) !== LEGACY_PIPELINE_PRODUCT)
      .map((s) => String(s.id));
    if (ids.length > 0) {
      try {
        stored = await client.parameters.bulk(ids);
      } catch (e) {
        ctx.io.stderr.write(`note: the stored product parameters could not be read (${printable(toCliError(e, { origins }).message)}); `
          + `stageIds and productParameters are left out${pipelineRoles ? ' (and the pipelines\' types and regions are placeholders)' : ''}\n`);
      }
    }
    const identityTypes = pipelineRoles ? await readIdentityTypes(ctx, client, origins) : undefined;
    const model = importModel(subs, products, { skipPipelines: opts.skipPipelines, stored, pipelineRoles, identityTypes });
    const code = renderImportedStack(model, { className: opts.className, module: opts.module, source: origins[0] });
    if (opts.out) {
      const file = resolve(opts.out);
      writeFileSync(file, code);
      if (!opts.json) {
        const pipes = model.pipelines === undefined ? ''
          : `, ${model.pipelines.length} unified pipeline${model.pipelines.length === 1 ? '' : 's'} adopted by one NotificationPipelineFleet`
            + `${(model.pipelinePlaceholders ?? []).length > 0 ? ` (${model.pipelinePlaceholders!.length} with values no read shows: notShown placeholders)` : ''}`;
        ctx.io.stdout.write(`wrote ${opts.out}: ${model.subscriptions.length} subscription${model.subscriptions.length === 1 ? '' : 's'} adopted${pipes}`
          + `${model.notImported.length > 0 ? `, ${model.notImported.length} not imported (listed in the file)` : ''}\n`);
      }
    } else if (!opts.json) {
      ctx.io.stdout.write(code);
    }
    if (opts.json) printJson(ctx, { ...model, ...(opts.out ? { out: opts.out } : { code }) });
  });
}

/** Remote identity types (17 seller, 18 vendor) by identity ID, from the identity listing; undefined when not shown. */
async function readIdentityTypes(ctx: RunContext, client: DpiClient, origins: string[]): Promise<Map<string, number> | undefined> {
  try {
    const rows = await client.remoteIdentities.list();
    const types = new Map<string, number>();
    for (const r of rows) if (typeof r.remote_identity_type_id === 'number') types.set(String(r.id), r.remote_identity_type_id);
    return types;
  } catch (e) {
    ctx.io.stderr.write(`note: the remote identities could not be read (${printable(toCliError(e, { origins }).message)}); the pipelines' account types are placeholders\n`);
    return undefined;
  }
}
