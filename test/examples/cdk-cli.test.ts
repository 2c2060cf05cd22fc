import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The example app works with the real `aws-cdk` CLI (a dev dependency), offline:
 * `cdk synth` writes the cloud assembly and `cdk diff --template` compares the
 * app against a saved template without any AWS credentials.
 */
const examples = path.join(__dirname, '..', '..', 'examples');
const cdk = path.join(__dirname, '..', '..', 'node_modules', '.bin', 'cdk');

function run(args: string[]): string {
  return execFileSync(cdk, [...args, '--no-notices'], {
    cwd: examples,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CI: 'true', CDK_DISABLE_VERSION_CHECK: 'true', AWS_EC2_METADATA_DISABLED: 'true' },
    timeout: 120_000,
  });
}

describe('example app with the cdk CLI', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dpi-cdk-cli-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('cdk synth writes the stack with our custom resources', () => {
    run(['synth', '-q', '-o', path.join(dir, 'cdk.out')]);
    const template = JSON.parse(fs.readFileSync(path.join(dir, 'cdk.out', 'MarketplaceData.template.json'), 'utf8'));
    const types = Object.values(template.Resources as Record<string, { Type: string }>).map((r) => r.Type);
    expect(types.filter((t) => t === 'Custom::DpiNotificationPipeline')).toHaveLength(2);
    expect(types).toContain('Custom::DpiSubscription');
    expect(types).toContain('Custom::DpiHistoryRequest');
    expect(types).toContain('Custom::DpiProductOrderJobs');
    fs.copyFileSync(path.join(dir, 'cdk.out', 'MarketplaceData.template.json'), path.join(dir, 'saved.json'));
  }, 120_000);

  test('cdk diff --template shows a change of notification types, offline', () => {
    const out = run(['diff', '--template', path.join(dir, 'saved.json'), '-o', path.join(dir, 'cdk.out.diff'),
      '-c', 'sellerTypes=ORDER_CHANGE,REPORT_PROCESSING_FINISHED', '--exclusively', 'MarketplaceData']);
    expect(out).toMatch(/\[~\] Custom::DpiNotificationPipeline SellerNotifications\/Resource/);
    expect(out).toMatch(/\[-\]\s+"LISTINGS_ITEM_STATUS_CHANGE"/);
    expect(out).not.toMatch(/VendorNotifications/);
  }, 120_000);

  test('cdk diff --template against the unchanged app shows no difference', () => {
    const out = run(['diff', '--template', path.join(dir, 'saved.json'), '-o', path.join(dir, 'cdk.out.same'), '--exclusively', 'MarketplaceData']);
    expect(out).toMatch(/Number of stacks with differences: 0/);
  }, 120_000);
});

describe('a fleet change with the cdk CLI, offline (docs/fleets.md)', () => {
  // examples/fleet.ts; its import of the package resolves to src/ (scripts/package-alias.ts), as examples/cdk.json does.
  const fleetApp = 'npx ts-node --transpile-only -r ../scripts/package-alias.ts fleet.ts';
  const sellers = (ids: number[]): string => `sellers=${ids.join(',')}`;
  const base = Array.from({ length: 20 }, (_, i) => 200_001 + i);
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dpi-cdk-fleet-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('cdk diff --template shows one added identity only as its nested stack\'s TemplateURL in the parent', () => {
    run(['synth', '-q', '--app', fleetApp, '-c', sellers(base), '-o', path.join(dir, 'a')]);
    const nested = fs.readdirSync(path.join(dir, 'a')).filter((f) => f.endsWith('.nested.template.json'));
    expect(nested.length).toBeGreaterThan(1);
    const out = run(['diff', '--app', fleetApp, '--template', path.join(dir, 'a', 'Platform.template.json'), '-o', path.join(dir, 'b'),
      '-c', sellers([...base, 200_021]), 'Platform']);
    // One nested stack resource changed, and only its TemplateURL: nothing of the pipeline inside it.
    expect(out.match(/\[~\] AWS::CloudFormation::Stack /g)).toHaveLength(1);
    expect(out).toMatch(/\[~\] TemplateURL/);
    expect(out).not.toMatch(/Custom::DpiNotificationPipeline|200021|\[\+\]\s+Custom::/);
    expect(out).toMatch(/Number of stacks with differences: 1/);
  }, 180_000);
});
