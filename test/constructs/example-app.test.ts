import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks, ServerlessChecks } from 'cdk-nag';
import { assetHashSerializer, countOf } from './helpers';
import { buildExampleApp, exampleOrderIds, SERVICE_ENDPOINTS } from '../../examples/app';
import { NagPlugin } from '../../examples/nag';

expect.addSnapshotSerializer(assetHashSerializer);

function exampleStack(context?: Record<string, string>): { stack: Stack; template: Template } {
  const app = buildExampleApp({ context });
  const stack = app.node.findChild('MarketplaceData') as Stack;
  return { stack, template: Template.fromStack(stack) };
}

describe('example app', () => {
  const { stack, template } = exampleStack();

  test('cdk destroy leaves nothing behind: only what the user asked to retain is retained', () => {
    const resources = template.toJSON().Resources as Record<string, { Type: string; DeletionPolicy?: string }>;
    const retained = Object.entries(resources)
      .filter(([, r]) => r.DeletionPolicy === 'Retain' || r.DeletionPolicy === 'RetainExceptOnCreate')
      .map(([id, r]) => `${id} (${r.Type})`);
    expect(retained).toEqual([]);
    // the library's own log groups (handler, framework, waiter) go with the stack
    const logGroups = Object.values(resources).filter((r) => r.Type === 'AWS::Logs::LogGroup');
    expect(logGroups.length).toBeGreaterThanOrEqual(3);
  });

  test('cdk-nag AwsSolutions: zero unacknowledged findings', () => {
    const report = new AwsSolutionsChecks().validateScope(stack.node.root);
    const findings = report.violations.map((v) => `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
    expect(findings).toEqual([]);
    expect(report.success).toBe(true);
  });

  test('cdk-nag is not vacuous: a wildcard the user adds next to the library\'s grant is reported', () => {
    const app = buildExampleApp({ outdir: fs.mkdtempSync(path.join(os.tmpdir(), 'dpi-example-')) });
    const s = app.node.findChild('MarketplaceData') as Stack;
    const consumerRole = s.node.findChild('OrderNotificationConsumerRole') as iam.Role;
    consumerRole.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: ['arn:aws:s3:::somebody-elses-bucket/*'] }));
    app.synth(); // the library's acknowledgements are recorded by aspects during synth
    const report = new AwsSolutionsChecks().validateScope(app);
    fs.rmSync(app.outdir, { recursive: true, force: true });
    // Only the user's own wildcard: the grant's `<prefix>*` (the narrowest there is) is acknowledged by the library.
    expect(report.violations.map((v) => v.ruleName)).toEqual(['AwsSolutions-IAM5[Resource::arn:aws:s3:::somebody-elses-bucket/*]']);
  });

  describe.each([
    ['HIPAA Security', () => new HIPAASecurityChecks()],
    ['NIST 800-53 R5', () => new NIST80053R5Checks()],
    ['Serverless', () => new ServerlessChecks()],
  ])('cdk-nag %s', (_name, pack) => {
    test('zero unacknowledged findings on the resources the library creates; the example\'s own consumer function is checked (not vacuous)', () => {
      const report = pack().validateScope(stack.node.root);
      const paths = report.violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`));
      const userOwned = /^MarketplaceData\/OrderNotificationConsumer(Logs|Role)?\//;
      expect(paths.filter((p) => !userOwned.test(p.split(' ')[1]))).toEqual([]);
      expect(paths.some((p) => p.includes('MarketplaceData/OrderNotificationConsumer/Resource'))).toBe(true);
    });
  });

  test('the nag plugin of the example runs at synth and passes', () => {
    const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'dpi-example-'));
    const validate = jest.spyOn(NagPlugin.prototype, 'validate');
    try {
      const app = buildExampleApp({ outdir, nag: true });
      const assembly = app.synth();
      expect(assembly.getStackByName('MarketplaceData').template.Resources).toBeDefined();
      expect(validate).toHaveBeenCalledTimes(1);
      expect(validate.mock.results[0].value).toMatchObject({ success: true, violations: [] });
    } finally {
      validate.mockRestore();
      fs.rmSync(outdir, { recursive: true, force: true });
    }
  });

  test('cdk-nag the documented way (Validations.of(app).addPlugins(new AwsSolutionsChecks())) passes the library and reports a user wildcard', () => {
    const run = (addWildcard: boolean): { error?: string; out: string } => {
      const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'dpi-example-'));
      const printed: string[] = [];
      const spies = [
        jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => { printed.push(args.map(String).join(' ')); }),
        jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => { printed.push(args.map(String).join(' ')); }),
      ];
      try {
        const app = buildExampleApp({ outdir });
        if (addWildcard) {
          const role = app.node.findChild('MarketplaceData').node.findChild('OrderNotificationConsumerRole') as iam.Role;
          role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: ['arn:aws:s3:::somebody-elses-bucket/*'] }));
        }
        Validations.of(app).addPlugins(new AwsSolutionsChecks());
        app.synth();
        return { out: printed.join('\n') };
      } catch (e) {
        return { error: (e as Error).message, out: printed.join('\n') };
      } finally {
        spies.forEach((x) => x.mockRestore());
        fs.rmSync(outdir, { recursive: true, force: true });
      }
    };
    const clean = run(false);
    expect(clean.error).toBeUndefined();
    expect(clean.out).not.toContain('requires a construct tree');
    const dirty = run(true);
    expect(`${dirty.error ?? ''}\n${dirty.out}`).toContain('somebody-elses-bucket');
  });

  test('resources: two pipelines, one subscription, one backfill, one order-jobs resource', () => {
    expect(countOf(template, 'Custom::DpiNotificationPipeline')).toBe(2);
    expect(countOf(template, 'Custom::DpiSubscription')).toBe(1);
    expect(countOf(template, 'Custom::DpiHistoryRequest')).toBe(1);
    expect(countOf(template, 'Custom::DpiProductOrderJobs')).toBe(1);
    // handler + isComplete + two frameworks with waiters (3 functions each) + the subscription monitor + the consumer
    expect(countOf(template, 'AWS::Lambda::Function')).toBe(10);
    template.hasResourceProperties('AWS::IAM::Role', { RoleName: 'service-spapi-firehose-role' });
    template.hasResourceProperties('Custom::DpiNotificationPipeline', {
      RemoteIdentityId: '362', AccountType: 'seller', NotificationTypes: ['ORDER_CHANGE', 'LISTINGS_ITEM_STATUS_CHANGE', 'REPORT_PROCESSING_FINISHED'],
    });
    template.hasResourceProperties('Custom::DpiNotificationPipeline', {
      RemoteIdentityId: '363', AccountType: 'vendor', NotificationTypes: ['ITEM_SALES_EVENT_CHANGE', 'DETAIL_PAGE_TRAFFIC_EVENT'],
    });
    template.hasResourceProperties('Custom::DpiSubscription', {
      ProductId: '3001', StorageGroupId: '501', RemoteIdentityId: '362', ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' }, StageIds: ['1001', '1002'],
    });
    template.hasResourceProperties('Custom::DpiHistoryRequest', { StartDate: '2026-11-15', EndDate: '2026-11-17' });
    template.hasResourceProperties('Custom::DpiProductOrderJobs', { OrderIds: exampleOrderIds(250) });
    expect(new Set(exampleOrderIds(250)).size).toBe(250);
    template.hasResourceProperties('Custom::DpiSubscription', {
      Connection: Match.objectLike({
        BaseUrl: SERVICE_ENDPOINTS.urls.baseUrl,
        SubscriptionsUrl: SERVICE_ENDPOINTS.urls.subscriptionsUrl,
        AccountUrl: SERVICE_ENDPOINTS.urls.accountUrl,
        UserUrl: SERVICE_ENDPOINTS.urls.userUrl,
        RemoteIdentityUrl: SERVICE_ENDPOINTS.urls.remoteIdentityUrl,
        AuthUrl: SERVICE_ENDPOINTS.urls.authUrl,
      }),
    });
  });

  test('context overrides: seller types and one origin for every service', () => {
    const { template: t } = exampleStack({ sellerTypes: 'ORDER_CHANGE,REPORT_PROCESSING_FINISHED', singleOriginUrl: 'http://127.0.0.1:4010' });
    t.hasResourceProperties('Custom::DpiNotificationPipeline', {
      RemoteIdentityId: '362', NotificationTypes: ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'],
    });
    t.hasResourceProperties('Custom::DpiSubscription', {
      Connection: {
        BaseUrl: 'http://127.0.0.1:4010',
        SubscriptionsUrl: 'http://127.0.0.1:4010',
        AccountUrl: 'http://127.0.0.1:4010',
        UserUrl: 'http://127.0.0.1:4010',
        RemoteIdentityUrl: 'http://127.0.0.1:4010',
        AuthUrl: 'http://127.0.0.1:4010',
        RefreshTokenSecretArn: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':secretsmanager:us-east-1:123456789012:secret:dpi/refresh-token']] },
      },
    });
  });

  test('full template snapshot (asset hashes stripped)', () => {
    expect(template.toJSON()).toMatchSnapshot();
  });
});
