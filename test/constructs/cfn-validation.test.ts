import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, CfnResource, Stack } from 'aws-cdk-lib';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { buildExampleApp } from '../../examples/app';
import { buildFleetApp } from '../../examples/fleet';
import globalSetup from '../jest-global-setup';

/*
 * aws-cdk-lib validates every synthesized template with its built-in CloudFormation rules (the WASM engine of
 * `@aws-cdk/cloudformation-validate`) and, by default, downgrades what it finds to a warning printed on stderr. The
 * test tiers turn that pass off (`CDK_VALIDATION=false`, set in test/jest-global-setup.ts): it takes about half the
 * time of every synth. This suite runs it, on the example app and a fleet, with findings as errors.
 */

/** A plugin's part of `validation-report.json`: only plugins that found something are listed. */
interface PluginReport { summary: { pluginName: string }; violations: unknown[] }

/** The plugin reports of a synth, or undefined when no validation ran (no report written). */
function validated(build: (outdir: string) => App, enabled = 'true'): PluginReport[] | undefined {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'dpi-cfn-validation-'));
  const before = process.env.CDK_VALIDATION;
  process.env.CDK_VALIDATION = enabled;
  try {
    const app = build(outdir);
    app.synth();
    const file = path.join(outdir, cxapi.VALIDATION_REPORT_FILE);
    if (!fs.existsSync(file)) return undefined;
    const report = JSON.parse(fs.readFileSync(file, 'utf8')) as { pluginReports: PluginReport[] };
    return report.pluginReports;
  } finally {
    if (before === undefined) delete process.env.CDK_VALIDATION; else process.env.CDK_VALIDATION = before;
    fs.rmSync(outdir, { recursive: true, force: true });
  }
}

const strict = { [cxapi.VALIDATE_AGAINST_DEFAULT_RULES]: 'true', [cxapi.STRICT_CFN_VALIDATE_ERRORS]: 'true' };

/** A stack with a queue whose timeout is not a number and a property SQS does not have. */
function broken(outdir: string): App {
  const app = new App({ outdir, context: { [cxapi.FAIL_SYNTH_ON_VALIDATION_ERRORS_CONTEXT]: 'false' } });
  const stack = new Stack(app, 'Broken');
  new CfnResource(stack, 'Queue', { type: 'AWS::SQS::Queue', properties: { VisibilityTimeout: 'soon', NoSuchProperty: 1 } });
  return app;
}

// aws-cdk-lib has had it since 2.2xx; the oldest supported version (npm run test:min-cdk) has none.
const builtIn = (cxapi as { VALIDATION_REPORT_FILE?: string }).VALIDATION_REPORT_FILE !== undefined;

(builtIn ? describe : describe.skip)('the built-in CloudFormation validation of aws-cdk-lib', () => {
  test('it runs when enabled (a broken template is reported) and not when disabled', () => {
    const found = (validated(broken) ?? []).flatMap((r) => r.violations);
    expect(found.length).toBeGreaterThan(0);
    expect(JSON.stringify(found)).toContain('Broken/Queue');
    expect(validated(broken, 'false')).toBeUndefined();
  });

  test('the test tiers turn it off unless the runner chose (test/jest-global-setup.ts)', () => {
    const before = process.env.CDK_VALIDATION;
    try {
      delete process.env.CDK_VALIDATION;
      globalSetup();
      expect(process.env.CDK_VALIDATION).toBe('false');
      process.env.CDK_VALIDATION = 'true';
      globalSetup();
      expect(process.env.CDK_VALIDATION).toBe('true');
    } finally {
      if (before === undefined) delete process.env.CDK_VALIDATION; else process.env.CDK_VALIDATION = before;
    }
  });

  test.each([
    ['the example app', (outdir: string) => buildExampleApp({ outdir, context: strict })],
    ['a fleet of 30 identities (nested stacks)', (outdir: string) => buildFleetApp({
      outdir, context: { ...strict, sellers: Array.from({ length: 30 }, (_, i) => 300_001 + i).join(',') },
    })],
  ])('%s: it runs and finds nothing', (_name, build) => {
    const reports = validated(build);
    expect(reports).toBeDefined(); // the pass ran and wrote its report
    expect((reports ?? []).flatMap((r) => r.violations.map((v) => `${r.summary.pluginName}: ${JSON.stringify(v)}`))).toEqual([]);
  });
});
