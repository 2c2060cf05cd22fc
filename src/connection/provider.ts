import * as path from 'path';
import { Annotations, Aws, Duration, Lazy, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct, IConstruct } from 'constructs';
import type { ILifecycleJournal } from './lifecycle-journal';
import { acknowledge, acknowledgeCompliance, acknowledgeWildcards } from './nag';
import { acknowledgeDeployTimeFunction, acknowledgeFrameworkFunctions, acknowledgeInlinePolicies, acknowledgeLogGroup } from './provider-nag';
import { differingProviderOptions, grantNetworkInterfaces, hasProviderOptions, networkPropsOf, ProviderOptions, requestBudgetSetting } from './provider-options';
import { HANDLER_LOG_GROUP_ENV, HANDLER_RUNTIME, PROVIDED_JOURNAL_TABLES_ENV, PROVIDER_ID, providerStackOf } from './provider-stacks';
import { boundConnectionValues, BOUND_CONNECTIONS_ENV, BOUND_STACK_ID_ENV, BOUND_STACKS_ENV, ConnectionProperties, CONTINUATION_ENV, CREATED_JOURNAL_TABLES_ENV, DECLARED_JOURNAL_TABLES_ENV, HandlerExports, journalWriterPath, REQUEST_BUDGET_ENV } from '../contract';

export type { ConnectionBinding } from './provider-stacks';
export { HANDLER_LOG_GROUP_ENV, HANDLER_RUNTIME, PROVIDED_JOURNAL_TABLES_ENV, PROVIDER_ID, providerStackOf, useParentProvider, usesParentProvider } from './provider-stacks';

/**
 * The single custom resource provider of a stack (internal).
 *
 * - one `lambda.Function` running the bundled handler (`index.onEvent`), with
 *   its own role (no managed policies) and an explicit log group;
 * - an `index.isComplete` function sharing the same role;
 * - one `custom-resources` `Provider` in front of them, with a waiter (query
 *   interval 30 s, total timeout 1 h): an event whose wait for the service's
 *   rate limit would pass the invocation's deadline continues in isComplete;
 * - created lazily, only when a `HistoryRequest` exists: a second `Provider`
 *   with a waiter of its own (its resources' service token since they exist).
 *
 * The Lambda count of a stack therefore does not grow with the number of
 * resources. Secrets are granted to the shared handler role, so both handler
 * functions can read every connection's refresh token secret.
 */
export class DpiProvider extends Construct {
  /**
   * Return the provider of the stack that contains `scope`, creating it on first use (with `options`, given by the
   * connection at `requester`). Options that differ from those the provider was made with are an error: one provider
   * per stack.
   */
  public static of(scope: IConstruct, options?: ProviderOptions, requester?: IConstruct): DpiProvider {
    const stack = providerStackOf(scope);
    const existing = stack.node.tryFindChild(PROVIDER_ID);
    if (existing) {
      if (!(existing instanceof DpiProvider)) {
        throw new Error(`${stack.node.path}: the construct ID '${PROVIDER_ID}' is reserved for the data pipeline integration provider; rename your construct`);
      }
      if (hasProviderOptions(options)) {
        const differing = differingProviderOptions(existing.options, options!);
        if (differing.length > 0) {
          throw new Error(`${(requester ?? scope).node.path}: provider options differ from those of ${existing.madeBy} (${differing.join('; ')}), `
            + `which made the provider ${existing.node.path} of the stack; one provider serves every resource of a stack and is made by the `
            + 'first ServiceConnection of the stack: give the provider options on that first connection (the others may omit them), or the '
            + 'same objects on each');
        }
      }
      return existing;
    }
    return new DpiProvider(stack, PROVIDER_ID, options ?? {}, (requester ?? scope).node.path);
  }

  /** The role shared by the handler functions (onEvent and isComplete): the library's, or `options.role`. */
  public readonly handlerRole: iam.IRole;
  /** The handler function (`index.onEvent`). */
  public readonly onEventFunction: lambda.Function;
  /** Log group of the handler functions: the library's, or `options.logGroup`. */
  public readonly handlerLogGroup: logs.ILogGroup;
  /** The options the provider was made with. */
  public readonly options: ProviderOptions;
  /** Construct path of the connection (or resource) that made the provider. */
  public readonly madeBy: string;
  /** The provider (framework Lambda) in front of the handler. */
  public readonly provider: cr.Provider;

  private readonly frameworkRole: iam.Role;
  private readonly frameworkLogGroup: logs.LogGroup;
  private readonly code: lambda.Code;
  private readonly grantedSecrets = new Set<string>();
  private readonly grantedJournals = new Set<string>();
  private readonly grantedRoles = new Set<string>();
  private readonly providedJournals: string[] = [];
  /** The declared journals among them (`DECLARED_JOURNAL_TABLES_ENV`). */
  private readonly declaredJournals: string[] = [];
  /** The connections it serves (`BOUND_CONNECTIONS_ENV`), each once; whether nested stacks use it (`<stack>-*`). */
  private readonly boundConnections: string[][] = [];
  private readonly boundConnectionKeys = new Set<string>();
  private servesNestedStacks = false;
  private readonly handlerFunctions: lambda.Function[] = [];
  private waiter?: cr.Provider;
  private isCompleteFunction?: lambda.Function;
  private waiterLogs?: logs.LogGroup;
  private completeRole?: iam.Role;

  private constructor(scope: Construct, id: string, options: ProviderOptions, madeBy: string) {
    super(scope, id);
    this.options = options;
    this.madeBy = madeBy;

    this.code = lambda.Code.fromAsset(path.join(__dirname, '..', '..', 'assets', 'handler', 'index'));

    if (options.logGroup) {
      this.handlerLogGroup = options.logGroup;
    } else {
      const group = new logs.LogGroup(this, 'HandlerLogs', {
        retention: options.logRetention ?? logs.RetentionDays.ONE_MONTH,
        // The library's own logs go with the stack: `cdk destroy` leaves nothing behind.
        removalPolicy: RemovalPolicy.DESTROY,
      });
      acknowledgeLogGroup(group);
      this.handlerLogGroup = group;
    }
    if (options.role) {
      this.handlerRole = options.role;
    } else {
      const role = new iam.Role(this, 'HandlerRole', {
        assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
        description: 'Data pipeline integration custom resource handler',
      });
      acknowledgeInlinePolicies(role);
      this.handlerRole = role;
    }
    this.handlerLogGroup.grantWrite(this.handlerRole);
    if (options.vpc) {
      grantNetworkInterfaces(this.handlerRole);
      acknowledgeWildcards(this, [{
        pattern: /^\*$/,
        reason: 'A function in a VPC manages its network interfaces (ec2:CreateNetworkInterface, ...): these EC2 actions do not support resource-level permissions.',
      }]);
    }
    if (options.permissionsBoundary) {
      // Every role created below this construct (the handler role, the framework roles, the waiter's): not a given `role`.
      iam.PermissionsBoundary.of(this).apply(options.permissionsBoundary);
    }

    this.onEventFunction = this.createHandler('OnEvent', HandlerExports.ON_EVENT);

    this.frameworkLogGroup = new logs.LogGroup(this, 'FrameworkLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      // The library's own logs go with the stack: `cdk destroy` leaves nothing behind.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.frameworkRole = new iam.Role(this, 'FrameworkRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'Data pipeline integration custom resource provider framework',
    });
    this.frameworkLogGroup.grantWrite(this.frameworkRole);
    acknowledgeLogGroup(this.frameworkLogGroup);
    acknowledgeInlinePolicies(this.frameworkRole);
    if (options.vpc) grantNetworkInterfaces(this.frameworkRole);

    // The main provider has a waiter too: an event whose wait for the service's rate limit would pass the invocation's
    // deadline continues in isComplete (docs/handler.md, "Waits longer than an invocation"). Its framework onEvent
    // function (whose ARN is every resource's service token) keeps its logical ID: no service token changes.
    this.provider = this.waitingProvider('Provider');

    // cdk-nag findings that stem from aws-cdk-lib's provider framework (each matched exactly).
    acknowledgeWildcards(this, [{
      pattern: /^<[A-Za-z0-9]+\.Arn>:\*$/,
      reason: 'Generated by aws-cdk-lib custom-resources: the framework may invoke any version of the one function it fronts (function ARN with a version suffix).',
    }]);
  }

  /** Service token of the provider without waiter. */
  public get serviceToken(): string {
    return this.provider.serviceToken;
  }

  /** Service token of the provider for history requests (created on first call): a waiter of its own, as deployed before. */
  public waiterServiceToken(): string {
    this.waiter ??= this.waitingProvider('WaiterProvider');
    return this.waiter.serviceToken;
  }

  /**
   * A provider framework in front of the onEvent function with a waiter (query interval 30 s, total timeout 1 h) that
   * polls the isComplete function. Both providers share the isComplete function, the waiter's framework role and the
   * waiter's log group (each made once; their construct IDs are those of the releases that had only the history
   * requests' waiter, so those stacks keep them).
   */
  private waitingProvider(id: string): cr.Provider {
    this.isCompleteFunction ??= this.createHandler('IsComplete', HandlerExports.IS_COMPLETE);
    if (!this.waiterLogs) {
      this.waiterLogs = new logs.LogGroup(this, 'WaiterLogs', {
        retention: logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      acknowledgeLogGroup(this.waiterLogs);
    }
    if (!this.completeRole) {
      this.completeRole = new iam.Role(this, 'WaiterFrameworkRole', {
        assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
        description: 'Data pipeline integration custom resource provider framework (waiter)',
      });
      this.frameworkLogGroup.grantWrite(this.completeRole);
      acknowledgeInlinePolicies(this.completeRole);
      if (this.options.vpc) grantNetworkInterfaces(this.completeRole);
    }
    const provider = new cr.Provider(this, id, {
      onEventHandler: this.onEventFunction,
      isCompleteHandler: this.isCompleteFunction,
      queryInterval: Duration.seconds(30),
      // CloudFormation waits at most one hour for a custom resource: a longer waiter would outlive it.
      totalTimeout: Duration.hours(1),
      logGroup: this.frameworkLogGroup,
      frameworkOnEventRole: this.frameworkRole,
      // A separate role: sharing the onEvent role would make a dependency cycle
      // (onEvent role policy -> state machine -> isComplete function -> role policy).
      frameworkCompleteAndTimeoutRole: this.completeRole,
      ...networkPropsOf(this.options),
      disableWaiterStateMachineLogging: false,
      waiterStateMachineLogOptions: {
        destination: this.waiterLogs,
        level: sfn.LogLevel.ALL,
        includeExecutionData: false,
      },
    });
    acknowledgeFrameworkFunctions(provider, this.options.vpc !== undefined);
    const stateMachine = provider.node.findChild('waiter-state-machine');
    acknowledgeWildcards(stateMachine, [{
      pattern: /^\*$/,
      reason: 'Generated by aws-cdk-lib for the waiter state machine\'s logging: CloudWatch Logs delivery actions (logs:CreateLogDelivery, ...) do not support resource-level permissions.',
    }]);
    acknowledge(stateMachine, 'AwsSolutions-SF2', 'The waiter state machine of aws-cdk-lib custom-resources offers no X-Ray option; it only polls the handler, which logs every step.');
    acknowledge(stateMachine, 'Serverless-StepFunctionStateMachineXray', 'The waiter state machine of aws-cdk-lib custom-resources offers no X-Ray option; it only polls the handler, which logs every step.');
    acknowledgeCompliance(stateMachine, 'IAMNoInlinePolicy', 'The state machine\'s role and its policy are made by aws-cdk-lib custom-resources for this state machine alone.');
    return provider;
  }

  /**
   * Let the handler functions use the lifecycle journal table `tableName` of the stack's account and region (once
   * per table): create it on first use (the app asked for it: `journalTableName`), read and write its items. Nothing
   * else in DynamoDB. The handler learns that it may create the table from its environment (`DPI_CREATED_JOURNAL_TABLES`).
   */
  public grantJournal(tableName: string, by?: IConstruct): void {
    if (this.grantedJournals.has(tableName)) {
      return;
    }
    this.refuseJournalTwoWays(tableName, 'journalTableName (a table the handler creates)', by);
    this.grantedJournals.add(tableName);
    if (this.grantedJournals.size === 1) {
      for (const fn of this.handlerFunctions) this.addCreatedJournalsEnvironment(fn);
    }
    this.handlerRole.addToPrincipalPolicy(new iam.PolicyStatement({
      sid: `LifecycleJournal${this.grantedJournals.size}`,
      actions: [
        'dynamodb:CreateTable', 'dynamodb:DescribeTable', 'dynamodb:UpdateContinuousBackups', 'dynamodb:DescribeContinuousBackups',
        'dynamodb:TagResource', 'dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem',
        'dynamodb:DeleteItem', 'dynamodb:Query',
      ],
      resources: [Stack.of(this).formatArn({ service: 'dynamodb', resource: 'table', resourceName: tableName })],
    }));
  }

  /**
   * Let the handler functions use the lifecycle journal table `table` that a connection supplied (`journalTable`, once
   * per table): read and write its items (and describe it, to check its key schema); never create it. The handler
   * learns that the table is supplied from its environment (`DPI_PROVIDED_JOURNAL_TABLES`).
   */
  public grantProvidedJournal(table: dynamodb.ITable, by?: IConstruct): void {
    // A declared journal is among the supplied tables too: named as a plain supplied table, it is refused.
    if (this.providedJournals.includes(table.tableName) && !this.declaredJournals.includes(table.tableName)) {
      return;
    }
    this.refuseJournalTwoWays(table.tableName, 'journalTable (a table you manage)', by);
    this.providedJournals.push(table.tableName);
    table.grantReadWriteData(this.handlerRole);
    table.grant(this.handlerRole, 'dynamodb:DescribeTable');
    if (this.providedJournals.length === 1) {
      for (const fn of this.handlerFunctions) this.addProvidedJournalsEnvironment(fn);
    }
  }

  /**
   * Let the handler functions use a declared journal (`LifecycleJournal`, once per table): as a supplied table, plus
   * reading its tags and resource policy (the handler checks them), and place the handler role under the journal's
   * writers' IAM path (`/dpi-journal/<table>/`), which its resource policy lets write items besides its maintainers.
   */
  public grantDeclaredJournal(journal: ILifecycleJournal, by?: IConstruct): void {
    if (this.declaredJournals.includes(journal.tableName)) return;
    this.refuseJournalTwoWays(journal.tableName, 'journal (a declared LifecycleJournal)', by);
    this.declaredJournals.push(journal.tableName);
    if (!this.providedJournals.includes(journal.tableName)) this.providedJournals.push(journal.tableName);
    if (this.providedJournals.length === 1) {
      for (const fn of this.handlerFunctions) this.addProvidedJournalsEnvironment(fn);
    }
    // Exactly what the handler calls, on that table; by name when the journal is in another stack (no cross-stack
    // reference: ServiceConnection orders the stacks).
    this.handlerRole.addToPrincipalPolicy(new iam.PolicyStatement({
      sid: 'DeclaredLifecycleJournal',
      actions: ['dynamodb:DescribeTable', 'dynamodb:ListTagsOfResource', 'dynamodb:GetResourcePolicy', 'dynamodb:GetItem', 'dynamodb:BatchGetItem',
        'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
      resources: [Stack.of(journal) === Stack.of(this) ? journal.tableArn
        : Stack.of(this).formatArn({ service: 'dynamodb', resource: 'table', resourceName: journal.tableName })],
    }));
    const role = this.handlerRole;
    if (this.declaredJournals.length > 1) {
      throw new Error(`${this.node.path}: the provider of stack ${Stack.of(this).stackName} would write two declared journals (${this.declaredJournals.join(', ')}); `
        + 'its role is under one journal\'s IAM path: give every ServiceConnection of a stack the same journal');
    }
    // The journal's resource policy lets only roles under its writers' path write items.
    const writerPath = journalWriterPath(journal.tableName);
    const cfn = role instanceof iam.Role ? role.node.defaultChild as iam.CfnRole | undefined : undefined;
    if (cfn && (cfn.path === undefined || cfn.path === '/' || cfn.path === writerPath)) {
      cfn.path = writerPath;
    } else if (cfn) {
      throw new Error(`${role.node.path}: the provider's role has the IAM path ${cfn.path}, but only roles under ${writerPath} may write the lifecycle journal `
        + `${journal.tableName}: leave its path unset`);
    } else {
      Annotations.of(this).addWarningV2('data-pipeline-integration-cdk:journal-writer-path',
        `the provider's role ${role.node.path} is not made by this app, so the library cannot place it: it must be under the IAM path ${writerPath}, `
        + 'or the journal\'s resource policy refuses its writes');
    }
  }

  /**
   * Let the handler functions read the creation time of `roleArns` (`iam:GetRole`): a 403 of the unified create
   * is retried only while a role is younger than a few minutes (IAM propagation).
   */
  public grantRoleRead(roleArns: string[]): void {
    const resolved = roleArns.filter((a) => a !== undefined);
    const key = JSON.stringify(Stack.of(this).resolve(resolved));
    if (this.grantedRoles.has(key)) {
      return;
    }
    this.grantedRoles.add(key);
    this.handlerRole.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['iam:GetRole'], resources: resolved }));
  }

  /**
   * Bind a connection (its addresses, secret and journal table) into the handler functions' environment: the handler
   * refuses events of any other (src/handler/binding.ts). Tokens stay tokens, resolved as in the resources' properties.
   */
  public bindConnection(connection: ConnectionProperties): void {
    const values = boundConnectionValues(connection);
    const key = JSON.stringify(Stack.of(this).resolve(values));
    if (this.boundConnectionKeys.has(key)) return;
    this.boundConnectionKeys.add(key);
    this.boundConnections.push(values);
  }

  /** Resources of `stack` use this provider: its own stack is always served; another (a fleet's nested stack) adds `<stack>-*`. */
  public serveStack(stack: Stack): void {
    if (stack === Stack.of(this) || this.servesNestedStacks) return;
    this.servesNestedStacks = true;
    // The handler proves that a stack named `<this stack>-...` is one of this stack's nested stacks (its parent or root).
    const name = Stack.of(this).stackName;
    this.handlerRole.addToPrincipalPolicy(new iam.PolicyStatement({
      sid: 'ProveNestedStacks',
      actions: ['cloudformation:DescribeStacks'],
      resources: [Stack.of(this).formatArn({ service: 'cloudformation', resource: 'stack', resourceName: `${name}-*/*` })],
    }));
    acknowledgeWildcards(this, [{
      pattern: new RegExp(`:cloudformation:[^:]*:[^:]*:stack/${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-\\*/\\*$`),
      reason: 'Read-only DescribeStacks on the stacks named like this stack\'s nested stacks (CloudFormation names them <stack>-<id>-<suffix>, '
        + 'unknown at synth): the handler reads a stack\'s ParentId to prove it one of this stack\'s own before it serves its events.',
    }]);
  }

  /** Let the handler functions read `secret` (once per secret). */
  public grantSecretRead(secret: secretsmanager.ISecret): void {
    const key = Stack.of(this).resolve(secret.secretArn);
    const keyText = JSON.stringify(key);
    if (this.grantedSecrets.has(keyText)) {
      return;
    }
    this.grantedSecrets.add(keyText);
    secret.grantRead(this.handlerRole);
  }


  private createHandler(id: string, exportName: string): lambda.Function {
    const fn = new lambda.Function(this, id, {
      code: this.code,
      handler: `index.${exportName}`,
      runtime: HANDLER_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: this.options.memorySize ?? 256,
      timeout: this.options.timeout ?? Duration.minutes(10),
      role: this.handlerRole,
      logGroup: this.handlerLogGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      description: `Data pipeline integration custom resource handler (${exportName})`,
      // Failure reasons name the log group the handler really writes to.
      environment: {
        [HANDLER_LOG_GROUP_ENV]: this.handlerLogGroup.logGroupName,
        [REQUEST_BUDGET_ENV]: requestBudgetSetting(this.options),
        // Every provider in front of the handler has a waiter: a wait past the deadline may continue in isComplete.
        [CONTINUATION_ENV]: '1',
      },
      ...networkPropsOf(this.options),
    });
    this.handlerFunctions.push(fn);
    if (this.providedJournals.length > 0) this.addProvidedJournalsEnvironment(fn);
    if (this.grantedJournals.size > 0) this.addCreatedJournalsEnvironment(fn);
    this.addBindingEnvironment(fn);
    acknowledgeDeployTimeFunction(fn, 'invoked synchronously by the provider framework, which reports its failures to CloudFormation; '
      + 'a dead-letter queue would never receive an event', this.options.vpc !== undefined);
    return fn;
  }

  /** What the provider serves (docs/handler.md, "What the provider binds"): its connections and its stacks. */
  private addBindingEnvironment(fn: lambda.Function): void {
    const stack = Stack.of(this);
    fn.addEnvironment(BOUND_CONNECTIONS_ENV, Lazy.string({ produce: () => stack.toJsonString(this.boundConnections) }));
    fn.addEnvironment(BOUND_STACKS_ENV, Lazy.string({
      produce: () => stack.toJsonString(this.servesNestedStacks ? [stack.stackName, `${stack.stackName}-*`] : [stack.stackName]),
    }));
    // The provider's stack: an event of a stack named like its nested stacks must come from one (DescribeStacks proves it).
    fn.addEnvironment(BOUND_STACK_ID_ENV, Aws.STACK_ID);
  }

  /**
   * One table is one kind of journal for a provider: created by the handler, managed by the app, or declared. Two
   * connections that name it two ways would leave the handler's treatment to the order of its lists (the strictest
   * wins) and the role with grants it never uses.
   */
  private refuseJournalTwoWays(table: string, as: string, by: IConstruct = this): void {
    const was = this.declaredJournals.includes(table) ? 'journal (a declared LifecycleJournal)'
      : this.providedJournals.includes(table) ? 'journalTable (a table you manage)'
        : this.grantedJournals.has(table) ? 'journalTableName (a table the handler creates)' : undefined;
    if (was === undefined) return;
    throw new Error(`${by.node.path}: the journal table '${table}' is given as ${as} here and as ${was} by another ServiceConnection of stack `
      + `${Stack.of(this).stackName}; give every connection of the stack the same journal, the same way`);
  }

  private addCreatedJournalsEnvironment(fn: lambda.Function): void {
    fn.addEnvironment(CREATED_JOURNAL_TABLES_ENV, Lazy.string({ produce: () => [...this.grantedJournals].join(',') }));
  }

  private addProvidedJournalsEnvironment(fn: lambda.Function): void {
    fn.addEnvironment(PROVIDED_JOURNAL_TABLES_ENV, Lazy.string({ produce: () => this.providedJournals.join(',') }));
    fn.addEnvironment(DECLARED_JOURNAL_TABLES_ENV, Lazy.string({ produce: () => this.declaredJournals.join(',') }));
  }
}
