import * as fs from 'fs';
import * as path from 'path';
import { App, Stack, StackProps } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import {
  DriftMonitor,
  IServiceConnection,
  LifecycleJournal,
  ServiceConnection,
  ServiceEndpoints,
  Subscription,
  SubscriptionMonitor,
} from '../../src';

const env = { account: '123456789012', region: 'us-east-1' };

/** A consumer stack that knows only the interface: what a library of stacks written against `IServiceConnection` does. */
class ConsumerStack extends Stack {
  public readonly subscription: Subscription;
  constructor(scope: Construct, id: string, connection: IServiceConnection, props?: StackProps) {
    super(scope, id, props);
    this.subscription = new Subscription(this, 'Orders', { connection, productId: 3001, remoteIdentityId: 362 });
    new SubscriptionMonitor(this, 'Monitor', { connection, subscriptions: [this.subscription] });
    new DriftMonitor(this, 'Drift', { connection });
  }
}

function sharedConnection(app: App): { shared: Stack; connection: ServiceConnection } {
  const journalStack = new Stack(app, 'Journal', { env });
  const journal = new LifecycleJournal(journalStack, 'Journal');
  const shared = new Stack(app, 'Shared', { env });
  const connection = new ServiceConnection(shared, 'Dpi', {
    endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'),
    refreshToken: new secretsmanager.Secret(shared, 'Token'),
    journal,
  });
  return { shared, connection };
}

describe('IServiceConnection', () => {
  test('a consumer stack given the interface of a connection of another stack synthesizes, with its own provider', () => {
    const app = new App();
    const { connection } = sharedConnection(app);
    const typed: IServiceConnection = connection;
    const consumer = new ConsumerStack(app, 'Consumer', typed, { env });
    const assembly = app.synth();
    expect(assembly.getStackByName('Consumer').template).toBeDefined();

    const t = Template.fromStack(consumer);
    // The consumer's stack has its own provider, whose role reads the other stack's secret through an import.
    t.resourceCountIs('Custom::DpiSubscription', 1);
    const providerFns = Object.keys(t.findResources('AWS::Lambda::Function')).filter((id) => /^DpiProvider/.test(id));
    expect(providerFns.length).toBeGreaterThan(0);
    const policies = JSON.stringify(t.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('secretsmanager:GetSecretValue');
    expect(policies).toMatch(/Fn::ImportValue[^}]*Shared:ExportsOutputRefToken/);
    // The resource's connection names the journal of the journal stack (by name) and the shared secret.
    const [sub] = Object.values(t.findResources('Custom::DpiSubscription'));
    const conn = consumer.resolve(sub.Properties.Connection);
    expect(conn.BaseUrl).toBe('https://api.example-dpi.com');
    expect(JSON.stringify(conn.RefreshTokenSecretArn)).toContain('Shared:ExportsOutputRefToken');
    expect(conn.JournalTableName).toBe(connection.journalTableName);
    // The monitors read the same secret.
    t.hasResourceProperties('AWS::Lambda::Function', { Handler: 'index.drift' });
    // The consumer is deployed after the stack it imports from.
    expect(consumer.dependencies.map((s) => s.stackName)).toContain('Shared');
  });

  test('every connection prop of the library takes the interface, not the concrete class', () => {
    const files = walk(path.join(__dirname, '..', '..', 'src')).filter((f) => f.endsWith('.ts'));
    // (the class's own file may name itself)
    const concrete = files.filter((f) => !f.endsWith('service-connection.ts') && /(readonly connection\??|\(connection): ServiceConnection\b/.test(fs.readFileSync(f, 'utf8')));
    expect(concrete).toEqual([]);
    const typed = files.filter((f) => /readonly connection: IServiceConnection;/.test(fs.readFileSync(f, 'utf8')));
    // pipeline, legacy pipeline, subscription, history request, order jobs, fleet, subscription monitor, drift monitor
    expect(typed.length).toBeGreaterThanOrEqual(8);
  });
});

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}
