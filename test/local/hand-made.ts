/**
 * Records made the way the service's web UI makes them (no app, no journal), and the synth of a file `dpi import`
 * wrote: shared by the import round trips, the fleet adoption test and the adoption bench (bench/lib/adoption.ts).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

/** A unified pipeline the web UI asks for. */
export interface HandMadeUnified {
  readonly types: readonly string[];
  /** The management role's ARN. */
  readonly role: string;
  /** The EventBridge to Firehose role's ARN. @default none (the field is left out) */
  readonly ebRole?: string;
  /** @default 'us-east-1' */
  readonly region?: string;
}

/** The body of `POST /service/sp/notifications-unified/{identity}` for `u`. */
export function unifiedPipelineBody(u: HandMadeUnified): unknown {
  return {
    data: {
      type: 'Service',
      attributes: {
        notification_types: [...u.types],
        role_arn: u.role,
        ...(u.ebRole !== undefined ? { eb_to_fh_role_arn: u.ebRole } : {}),
        aws_region: u.region ?? 'us-east-1',
      },
    },
  };
}

/**
 * The body of the product-107 subscription (`POST /v2/sub`) that stores a unified pipeline's result, as the web UI
 * makes it: `answer` is the unified POST's answer (its attributes at `data.attributes` or at the top).
 */
export function pipelineSubscriptionBody(identity: number, answer: unknown, name: string): unknown {
  const o = (answer ?? {}) as { data?: { attributes?: Record<string, unknown> }; attributes?: Record<string, unknown> };
  const a = o.data?.attributes ?? o.attributes ?? {};
  return {
    data: {
      type: 'Subscription',
      attributes: {
        account: 1001,
        user: 2001,
        status: 'active',
        date_start: '2026-01-01T00:00:00Z',
        product: 107,
        remote_identity: identity,
        name,
        product_parameters: { subscriptions: JSON.stringify(a.subscriptions), meta: JSON.stringify(a.meta) },
      },
    },
  };
}

/** Where `synthImportedStack` finds the library and the file, and where it writes. */
export interface ImportedSynth {
  /** The library's entry (`src/`). */
  readonly src: string;
  /** The file `dpi import` wrote (its class `AccountStack`). */
  readonly file: string;
  /** The cloud assembly's directory. */
  readonly outdir: string;
  /** The driver script written and run. */
  readonly driver: string;
  /** The working directory (the repository: ts-node and aws-cdk-lib resolve from it). */
  readonly cwd: string;
}

/**
 * Synthesizes the `AccountStack` of an imported file as stack `Imported` in a Node process of its own, with
 * transpile-only TypeScript: loading aws-cdk-lib through the test runner's module registry makes the same synth take
 * about 25 s more.
 */
export function synthImportedStack(s: ImportedSynth): void {
  writeFileSync(s.driver, [
    "const { App } = require('aws-cdk-lib');",
    "const secretsmanager = require('aws-cdk-lib/aws-secretsmanager');",
    `const { ServiceConnection } = require(${JSON.stringify(s.src)});`,
    `const { AccountStack } = require(${JSON.stringify(s.file)});`,
    `const app = new App({ outdir: ${JSON.stringify(s.outdir)} });`,
    "new AccountStack(app, 'Imported', {",
    "  env: { account: '123456789012', region: 'us-east-1' },",
    "  connection: (stack) => new ServiceConnection(stack, 'Dpi', {",
    "    singleOriginUrl: 'https://api.example-dpi.com',",
    "    refreshToken: secretsmanager.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),",
    "    journalTableName: 'dpi-lifecycle-journal',",
    '  }),',
    '});',
    'app.synth();',
  ].join('\n'));
  execFileSync(process.execPath, ['-r', 'ts-node/register/transpile-only', s.driver], { cwd: s.cwd, stdio: 'pipe', maxBuffer: 64 * 1024 * 1024 });
}
