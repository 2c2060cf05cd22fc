/**
 * The demo (`npm run demo`): the example app through its whole lifecycle against
 * the emulator, with the real constructs, the real bundled handler and `dpi`.
 *
 *   1. synthesize examples/app.ts in-process
 *   2. `dpi local-deploy` it (create)
 *   3. change the seller pipeline's notification types (context `sellerTypes`) and deploy again (update)
 *   4. ingest a few TX reports for the orders subscription and show `dpi status` / `dpi tx --tree`
 *   5. destroy, then show what remains in the emulated customer account and assert that it is
 *      only what the service interface retains (exit code 1 otherwise)
 *
 * Loopback only; everything lives in a temporary folder that is removed at the end
 * (kept with DPI_DEMO_KEEP=1).
 */
// First: the example app imports the package by name; in this repository that is src/ (scripts/package-alias.ts).
import './package-alias';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildExampleApp } from '../examples/app';
import { runDpi } from '../src/cli/program';
import { DpiClient, endpointsFromBase } from '../src/client';
import { BOUND_RUN_ENV } from '../src/contract';
import { DEFAULT_REFRESH_TOKEN, EmulatorStateSnapshot, RunningEmulator, startEmulator } from '../src/emulator';
import { monitor, setMetricSink } from '../src/handler/monitor';
import { configureLocalRuntime } from '../src/handler/runtime';
import { defaultHandlerPath, LocalDeployResult, runLocalDeploy } from '../src/local';

const problems: string[] = [];
const line = (text = ''): void => {
  process.stdout.write(`${text}\n`);
};
const heading = (text: string): void => {
  line();
  line(`=== ${text} ${'='.repeat(Math.max(0, 96 - text.length))}`);
  line();
};
const check = (ok: boolean, what: string): void => {
  line(`  ${ok ? 'ok  ' : 'FAIL'}  ${what}`);
  if (!ok) problems.push(what);
};

async function admin<T>(url: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${await res.text()}`);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

function synth(outdir: string, context: Record<string, string>): string {
  const t0 = Date.now();
  buildExampleApp({ outdir, context }).synth();
  const ctx = Object.entries(context).map(([k, v]) => `-c ${k}=${v}`).join(' ');
  line(`Synthesized examples/app.ts${ctx ? ` (${ctx})` : ''} -> ${outdir} in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  return outdir;
}

async function dpi(args: string[], url: string): Promise<number> {
  // The CLI runs in-process with its own IO (the bundled `dpi` does the same from a shell).
  line(`$ dpi ${args.join(' ')}`);
  const code = await runDpi(args, {
    env: { DPI_BASE_URL: url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN, NO_COLOR: '1' },
    stdout: { write: (t: string) => process.stdout.write(t) },
    stderr: { write: (t: string) => process.stdout.write(t) },
    isTTY: false,
  });
  line(`(exit code ${code})`);
  return code;
}

function pipelineSpecific(s: EmulatorStateSnapshot): string[] {
  return s.cloud.filter((c) => !c.shared || c.pipelineId !== undefined).map((c) => `${c.kind} ${c.id}`);
}

async function main(): Promise<void> {
  const bundle = defaultHandlerPath();
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run 'npx projen bundle' first (npm run demo does)`);
  const work = mkdtempSync(join(tmpdir(), 'dpi-demo-'));
  const stateDir = join(work, '.dpi');
  const stateFile = join(stateDir, 'local-state.json');
  let emulator: RunningEmulator | undefined;
  try {
    heading('1. Synthesize the example app');
    const v1 = synth(join(work, 'cdk.out.v1'), {});

    heading('2. Start the emulator (loopback) and deploy the app locally: dpi local-deploy');
    emulator = await startEmulator({ host: '127.0.0.1', port: 0, stateFile: join(stateDir, 'emulator-state.json') });
    const url = emulator.url;
    line(`Emulator at ${url}; every connection URL of the app is rewritten to it.`);
    line(`$ dpi local-deploy --app ${v1} --emulator ${url} --state ${stateFile}`);
    line();
    const deployOpts = { emulatorUrl: url, stateFile, refreshToken: DEFAULT_REFRESH_TOKEN, progress: line, output: line };
    const created = await runLocalDeploy({ ...deployOpts, app: v1 });
    check(created.success, 'create succeeded');
    const seller = created.resources.find((r) => r.logicalId.startsWith('SellerNotifications'));
    const orders = created.resources.find((r) => r.type === 'Custom::DpiSubscription');
    if (!created.success || !seller || !orders) throw new Error('the first deployment failed; see above');
    check(seller.attributes.SubscribedTypes === 'ORDER_CHANGE,LISTINGS_ITEM_STATUS_CHANGE,REPORT_PROCESSING_FINISHED', 'seller pipeline subscribed to its three types');

    heading('3. Change the seller pipeline\'s notification types and deploy again');
    const v2 = synth(join(work, 'cdk.out.v2'), { sellerTypes: 'ORDER_CHANGE,REPORT_PROCESSING_FINISHED' });
    line();
    await admin(url, 'DELETE', '/_emulator/requests');
    const updated = await runLocalDeploy({ ...deployOpts, app: v2 });
    check(updated.success, 'update succeeded');
    const changed = updated.events.filter((e) => e.status === 'UPDATE_COMPLETE' && e.type !== 'AWS::CloudFormation::Stack').map((e) => e.logicalId);
    check(changed.length === 1 && changed[0] === seller.logicalId, `only the seller pipeline was updated (${changed.join(', ')})`);
    const seller2 = updated.resources.find((r) => r.logicalId === seller.logicalId)!;
    check(seller2.physicalId === seller.physicalId, `same physical ID (${seller2.physicalId}): updated in place`);
    check(seller2.attributes.SubscribedTypes === 'ORDER_CHANGE,REPORT_PROCESSING_FINISHED', 'seller pipeline now subscribed to ORDER_CHANGE,REPORT_PROCESSING_FINISHED');

    line();
    line('Deploying the same app once more changes nothing:');
    await admin(url, 'DELETE', '/_emulator/requests');
    const again = await runLocalDeploy({ ...deployOpts, app: v2, output: () => undefined });
    const calls = await admin<Array<{ method: string }>>(url, 'GET', '/_emulator/requests');
    check(again.success && again.events.length === 0 && calls.filter((c) => c.method !== 'GET').length === 0, 'no event and no changing service call');

    heading('4. Data movement of the orders subscription: dpi status / dpi tx');
    const sub = orders.physicalId;
    const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const now = Math.floor(Date.now() / 1000);
    const reports = [
      { id: 'tx-demo-root', sender: 'scheduler', status: 'PROCESSED', timestamp: now - 600, subscription_id: Number(sub), subscription_name: 'orders-us', product_name: 'Marketplace Orders', attribution_date: day, children: ['tx-demo-items', 'tx-demo-fees'] },
      { id: 'tx-demo-items', sender: 'zeroadmin', status: 'PROCESSED', timestamp: now - 300, parent: 'tx-demo-root', payload_name: 'order_items', file_path: `s3://orders/${day}/order_items.parquet` },
      { id: 'tx-demo-fees', sender: 'ftpsync', status: 'IN_PROGRESS', timestamp: now - 60, parent: 'tx-demo-root', payload_name: 'order_fees' },
    ];
    for (const r of reports) await admin(url, 'POST', '/_emulator/tx', r);
    line(`Ingested ${reports.length} TX reports for subscription ${sub} (attribution date ${day}) through POST /_emulator/tx.`);
    line();
    const statusCode = await dpi(['status', '--subscription', sub], url);
    check(statusCode === 0, 'dpi status: no record in ERROR');
    line();
    const txCode = await dpi(['tx', '--subscription', sub, '--tree'], url);
    check(txCode === 0, 'dpi tx --tree');

    line();
    line('What the stack\'s SubscriptionMonitor publishes for it (CloudWatch embedded metric format, one run):');
    // The run the monitor's rule sends, and the same run bound in its function's environment (as the construct binds it).
    const bound = {
      Connection: {
        BaseUrl: url,
        SubscriptionsUrl: url,
        AccountUrl: url,
        UserUrl: url,
        RemoteIdentityUrl: url,
        AuthUrl: url,
        RefreshTokenSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:dpi/refresh-token',
      },
      Namespace: 'DataPipelineIntegration',
    };
    configureLocalRuntime({
      readSecret: async () => DEFAULT_REFRESH_TOKEN,
      callerAccountId: async () => '123456789012',
      environment: { [BOUND_RUN_ENV]: JSON.stringify(bound) },
    });
    const emf: string[] = [];
    const previous = setMetricSink((l) => emf.push(l));
    // The function's own JSON log lines (one per service call) are not part of this picture.
    // eslint-disable-next-line no-console
    const consoleLog = console.log;
    // eslint-disable-next-line no-console
    console.log = () => undefined;
    const run = await monitor({ ...bound, Subscriptions: [{ id: sub, label: 'orders-us' }] });
    setMetricSink(previous);
    // eslint-disable-next-line no-console
    console.log = consoleLog;
    for (const l of emf) {
      const m = JSON.parse(l) as Record<string, unknown>;
      const names = (m._aws as { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string }> }> }).CloudWatchMetrics[0].Metrics.map((x) => x.Name);
      line(`  ${m.Payload ? `payload ${String(m.Payload).padEnd(12)}` : 'subscription        '} ${names.map((n) => `${n}=${String(m[n])}`).join('  ')}`);
    }
    line(`  (${run.calls} transaction page(s) read, ${run.failed} failure(s))`);
    const total = emf.map((l) => JSON.parse(l) as Record<string, unknown>).find((m) => !m.Payload);
    check(run.failed === 0 && total?.ErrorRecords === 0 && total?.InProgressRecords === 1,
      'the monitor sees what dpi status shows: no record in ERROR, one in progress (order_fees)');

    heading('5. Drift: a change made behind the stack\'s back (dpi drift), and nothing orphaned (dpi orphans)');
    const inSync = await dpi(['drift', '--local', '--state', stateFile], url);
    check(inSync === 0, 'dpi drift: every resource IN_SYNC right after the deploy');
    line();
    line(`Pausing subscription ${sub} the way the service's web UI would (PATCH /v2/sub/${sub}, status paused):`);
    const ui = new DpiClient({ endpoints: endpointsFromBase(url), refreshToken: DEFAULT_REFRESH_TOKEN });
    await ui.subscriptions.update(sub, { status: 'paused' });
    const drifted = await dpi(['drift', '--local', '--state', stateFile], url);
    check(drifted === 1, 'dpi drift: the orders subscription is MODIFIED (status active -> paused), exit 1');
    await ui.subscriptions.update(sub, { status: 'active' });
    line();
    const noOrphans = await dpi(['orphans', '--local', '--state', stateFile], url);
    check(noOrphans === 0, 'dpi orphans: every journal record belongs to a deployed resource');

    heading('6. Destroy: dpi local-deploy --destroy');
    const destroyed: LocalDeployResult = await runLocalDeploy({ ...deployOpts, destroy: true });
    check(destroyed.success, 'destroy succeeded');
    check(!existsSync(stateFile), 'local state cleared');
    line();
    const afterDestroy = await dpi(['orphans', '--local', '--state', stateFile], url);
    check(afterDestroy === 0, 'dpi orphans after the destroy: nothing left behind');

    heading('7. What remains in the emulated customer account');
    const s = await admin<EmulatorStateSnapshot>(url, 'GET', '/_emulator/state');
    line('Customer cloud resources:');
    for (const c of s.cloud) line(`  ${c.shared ? 'shared  ' : 'pipeline'}  ${c.kind.padEnd(22)} ${c.id}`);
    line('IAM roles (the emulator\'s default fixtures and the roles the app declares; customer roles are never deleted by the service):');
    for (const r of s.cloudRoles) line(`  ${r.roleArn}${r.trustsService ? '  (trusts the service)' : ''}`);
    line('Notification destinations:');
    for (const d of s.destinations) line(`  ${d.shared ? 'shared  ' : 'own     '}  ${d.kind.padEnd(12)} ${d.arn}${d.legacySubscriptionId ? `  (legacy pipeline ${d.legacySubscriptionId}, a fixture)` : ''}`);
    const enabled = s.upstreamSubscriptions.filter((u) => u.enabled);
    line(`Enabled upstream notification subscriptions: ${enabled.length === 0 ? 'none' : enabled.map((u) => `${u.notificationType}${u.legacySubscriptionId ? ` (legacy ${u.legacySubscriptionId})` : ''}`).join(', ')}`);
    line('Subscriptions the app made:');
    const made = new Set(created.resources.concat(updated.resources).filter((r) => r.type !== 'Custom::DpiHistoryRequest' && r.type !== 'Custom::DpiProductOrderJobs').map((r) => Number(r.physicalId)));
    for (const x of s.subscriptions.filter((y) => made.has(y.id))) line(`  ${x.id}  product ${x.product}  ${x.status}  ${x.name}`);
    line();
    check(pipelineSpecific(s).length === 0, `no pipeline-specific resource remains${pipelineSpecific(s).length ? `: ${pipelineSpecific(s).join(', ')}` : ''}`);
    const active107 = s.subscriptions.filter((x) => x.product === 107 && x.status === 'active').map((x) => x.id);
    check(active107.length === 0, `no active product-107 subscription${active107.length ? `: ${active107.join(', ')}` : ''}`);
    check(enabled.every((u) => u.pipelineId === undefined), 'no enabled upstream subscription of a unified pipeline');
    check(s.cloud.some((c) => c.kind === 's3-bucket' && c.shared), 'the shared bucket (and its objects) is retained');
    check(s.subscriptions.filter((x) => made.has(x.id)).every((x) => x.status === 'invalid'), 'every subscription the app made is invalid');
    const log = readFileSync(join(stateDir, 'handler.log'), 'utf8');
    check(!log.includes(DEFAULT_REFRESH_TOKEN), `the handler log (${log.split('\n').length - 1} lines) holds no refresh token`);
  } finally {
    if (emulator) await emulator.stop();
    if (process.env.DPI_DEMO_KEEP === '1') line(`\n(kept ${work})`);
    else rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  () => {
    heading(problems.length === 0 ? 'Demo complete' : 'Demo FAILED');
    if (problems.length > 0) {
      for (const p of problems) line(`  - ${p}`);
      process.exitCode = 1;
    }
    line(`Total time ${process.uptime().toFixed(1)}s (including loading TypeScript and aws-cdk-lib)`);
  },
  (e: unknown) => {
    line(`\nDemo FAILED: ${(e as Error).message}`);
    process.exitCode = 1;
  },
);
