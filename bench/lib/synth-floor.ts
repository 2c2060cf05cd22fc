/**
 * The synth floor of an app of notification pipelines: the library's app (connection, roles, N `NotificationPipeline`s
 * in plain stacks of at most 400) against the same resources declared as bare `CfnResource`s, read from the library's
 * own synthesized templates (same logical IDs, types, properties, dependencies, policies, metadata and outputs), so the
 * floor cannot drift from the real output. `floorMatches` checks that the floor's templates equal the library's.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { App, CfnDeletionPolicy, CfnOutput, CfnResource, Stack } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { FIRST_IDENTITY, PIPELINES_PER_STACK } from './pipelines';
import { AccountType, NotificationPipeline, NotificationPipelineRoles, NotificationType, ServiceConnection } from '../../src';

/** A CloudFormation template as synthesized (only the sections the floor declares). */
export interface Template {
  Resources?: Record<string, TemplateResource>;
  Outputs?: Record<string, { Value: unknown; Export?: { Name: unknown }; Description?: string; Condition?: string }>;
  Conditions?: Record<string, unknown>;
  [section: string]: unknown;
}

interface TemplateResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DependsOn?: string | string[];
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  Metadata?: Record<string, unknown>;
  Condition?: string;
}

/** The templates of an app, by stack name (in the order the stacks were declared). */
export type AppTemplates = Array<{ stackName: string; template: Template }>;

/** Options of both apps. */
export interface SynthOptions {
  /** aws-cdk-lib's built-in CloudFormation validation of the templates at synth (`App` prop). @default true */
  readonly builtinValidation?: boolean;
}

const ENV = { account: '123456789012', region: 'us-east-1' };

/** A fresh, empty output directory for one synth (removed by the caller with `cleanup`). */
export function tempOutdir(): string {
  return mkdtempSync(join(os.tmpdir(), 'dpi-synth-floor-'));
}

/** Removes an output directory. */
export function cleanup(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * The library's app: `n` seller pipelines (identities FIRST_IDENTITY...) in plain stacks of at most 400, each stack with
 * its own connection; the roles are the first stack's. Synthesizes into `outdir` and returns the stacks' names.
 */
export function synthLibraryApp(outdir: string, n: number, options: SynthOptions = {}): string[] {
  const app = new App({ outdir, builtinCloudFormationValidation: options.builtinValidation ?? true });
  const names: string[] = [];
  let roles: NotificationPipelineRoles | undefined;
  for (let s = 0; s < Math.max(1, Math.ceil(n / PIPELINES_PER_STACK)); s++) {
    const stack = new Stack(app, `Pipelines${s}`, { env: ENV });
    names.push(stack.stackName);
    const connection = new ServiceConnection(stack, 'Dpi', {
      singleOriginUrl: 'https://api.example-dpi.com',
      refreshToken: secretsmanager.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),
      journalTableName: 'dpi-lifecycle-journal',
    });
    roles ??= new NotificationPipelineRoles(stack, 'Roles', { serviceAccountId: '111122223333', externalId: 'ext-1' });
    for (let i = s * PIPELINES_PER_STACK; i < Math.min(n, (s + 1) * PIPELINES_PER_STACK); i++) {
      new NotificationPipeline(stack, `Seller${FIRST_IDENTITY + i}`, {
        connection,
        roles,
        remoteIdentityId: FIRST_IDENTITY + i,
        accountType: AccountType.SELLER,
        notificationTypes: [NotificationType.ORDER_CHANGE],
      });
    }
  }
  app.synth();
  return names;
}

/** Reads the synthesized templates of `stackNames` from a cloud assembly directory. */
export function readTemplates(outdir: string, stackNames: string[]): AppTemplates {
  return stackNames.map((stackName) => ({
    stackName,
    template: JSON.parse(readFileSync(join(outdir, `${stackName}.template.json`), 'utf8')) as Template,
  }));
}

/**
 * The floor: every resource (and output, condition) of `templates` declared as a bare `CfnResource` (`CfnOutput`,
 * `CfnCondition`) under the same logical ID in a stack of the same name, with the template's properties, dependencies,
 * policies and metadata as they are. Synthesizes into `outdir`.
 */
export function synthFloorApp(outdir: string, templates: AppTemplates, options: SynthOptions = {}): void {
  const app = new App({ outdir, builtinCloudFormationValidation: options.builtinValidation ?? true });
  for (const { stackName, template } of templates) {
    const stack = new Stack(app, stackName, { env: ENV });
    if (template.Conditions !== undefined) throw new Error(`${stackName}: the floor does not declare conditions`);
    for (const [id, r] of Object.entries(template.Resources ?? {})) {
      const res = new CfnResource(stack, id, { type: r.Type, properties: r.Properties });
      if (r.UpdateReplacePolicy !== undefined) res.cfnOptions.updateReplacePolicy = r.UpdateReplacePolicy as CfnDeletionPolicy;
      if (r.DeletionPolicy !== undefined) res.cfnOptions.deletionPolicy = r.DeletionPolicy as CfnDeletionPolicy;
      if (r.Condition !== undefined) throw new Error(`${stackName}: the floor does not declare conditions (resource ${id})`);
      for (const [k, v] of Object.entries(r.Metadata ?? {})) res.addMetadata(k, v);
      // The template's list as it is (the same names in the same order).
      if (r.DependsOn !== undefined) res.addOverride('DependsOn', r.DependsOn);
    }
    for (const [id, o] of Object.entries(template.Outputs ?? {})) {
      new CfnOutput(stack, id, {
        value: o.Value as string,
        ...(o.Export ? { exportName: o.Export.Name as string } : {}),
        ...(o.Description !== undefined ? { description: o.Description } : {}),
      });
      if (o.Condition !== undefined) throw new Error(`${stackName}: the floor does not declare conditions (output ${id})`);
    }
  }
  app.synth();
}

/** JSON with the keys of every object sorted (the order of a template's keys means nothing to CloudFormation). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (v !== null && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : v));
}

/** Differences between the reference templates and those in `floorOutdir` (empty when all are the same, keys sorted). */
export function floorMismatches(library: AppTemplates, floorOutdir: string): string[] {
  const floor = readTemplates(floorOutdir, library.map((t) => t.stackName));
  const out: string[] = [];
  library.forEach(({ stackName, template }, i) => {
    const a = canonical(template);
    const b = canonical(floor[i].template);
    if (a === b) return;
    const other = floor[i].template;
    const ids = [...new Set([...Object.keys(template.Resources ?? {}), ...Object.keys(other.Resources ?? {})])];
    const differs = ids.find((id) => canonical(template.Resources?.[id]) !== canonical(other.Resources?.[id]));
    out.push(`${stackName}: the template differs from the reference (${differs !== undefined ? `resource ${differs}` : 'outside Resources'})`);
  });
  return out;
}
