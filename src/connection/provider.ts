import * as path from 'path';
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct, IConstruct } from 'constructs';
import { acknowledge, acknowledgeCompliance, acknowledgeWildcards } from './nag';
import { ConnectionProperties, HandlerExports } from '../contract';

/**
 * What a resource construct needs from its connection (internal).
 */
export interface ConnectionBinding {
  /** Service token of the stack's provider. */
  readonly serviceToken: string;
  /** The `Connection` custom resource property. */
  readonly connection: ConnectionProperties;
}

/** Fixed construct ID of the provider singleton, directly under the stack. */
export const PROVIDER_ID = 'DpiProvider';

/** Stacks (nested stacks of a fleet) whose resources use the provider of their parent stack. */
const parentProviderStacks = new WeakSet<Stack>();

/**
 * Let the resources of the nested stack `nested` use the provider of its parent stack (one provider per deployed
 * stack tree instead of one per nested stack): their service token is the parent's, passed in as a nested stack
 * parameter by aws-cdk-lib (internal).
 */
export function useParentProvider(nested: Stack): void {
  if (!nested.nestedStackParent) {
    throw new Error(`${nested.node.path}: only a nested stack can use its parent's provider`);
  }
  parentProviderStacks.add(nested);
}

/** Whether `stack` is a nested stack that uses its parent's provider (internal). */
export function usesParentProvider(stack: Stack): boolean {
  return parentProviderStacks.has(stack);
}

/** The stack whose provider serves `scope`: its own stack, or the nearest parent for nested stacks of a fleet. */
export function providerStackOf(scope: IConstruct): Stack {
  let stack = Stack.of(scope);
  while (parentProviderStacks.has(stack) && stack.nestedStackParent) stack = stack.nestedStackParent;
  return stack;
}

/** Runtime of the handler Lambda: the newest Node.js runtime that aws-cdk-lib offers. */
export const HANDLER_RUNTIME = lambda.Runtime.NODEJS_24_X;

/**
 * The single custom resource provider of a stack (internal).
 *
 * - one `lambda.Function` running the bundled handler (`index.onEvent`), with
 *   its own role (no managed policies) and an explicit log group;
 * - one `custom-resources` `Provider` (one framework Lambda) in front of it;
 * - created lazily, only when a resource that waits exists (`HistoryRequest`):
 *   an `index.isComplete` function sharing the same role and a second
 *   `Provider` with a waiter (query interval 30 s, total timeout 2 h).
 *
 * The Lambda count of a stack therefore does not grow with the number of
 * resources. Secrets are granted to the shared handler role, so both handler
 * functions can read every connection's refresh token secret.
 */
export class DpiProvider extends Construct {
  /** Return the provider of the stack that contains `scope`, creating it on first use. */
  public static of(scope: IConstruct): DpiProvider {
    const stack = providerStackOf(scope);
    const existing = stack.node.tryFindChild(PROVIDER_ID);
    if (existing) {
      if (!(existing instanceof DpiProvider)) {
        throw new Error(`${stack.node.path}: the construct ID '${PROVIDER_ID}' is reserved for the data pipeline integration provider; rename your construct`);
      }
      return existing;
    }
    return new DpiProvider(stack, PROVIDER_ID);
  }

  /** The role shared by the handler functions (onEvent and isComplete). */
  public readonly handlerRole: iam.Role;
  /** The handler function (`index.onEvent`). */
  public readonly onEventFunction: lambda.Function;
  /** Log group of the handler functions. */
  public readonly handlerLogGroup: logs.LogGroup;
  /** The provider (framework Lambda) in front of the handler. */
  public readonly provider: cr.Provider;

  private readonly frameworkRole: iam.Role;
  private readonly frameworkLogGroup: logs.LogGroup;
  private readonly code: lambda.Code;
  private readonly grantedSecrets = new Set<string>();
  private readonly grantedJournals = new Set<string>();
  private readonly grantedRoles = new Set<string>();
  private waiter?: cr.Provider;

  private constructor(scope: Construct, id: string) {
    super(scope, id);

    this.code = lambda.Code.fromAsset(path.join(__dirname, '..', '..', 'assets', 'handler', 'index'));

    this.handlerLogGroup = new logs.LogGroup(this, 'HandlerLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      // The library's own logs go with the stack: `cdk destroy` leaves nothing behind.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.handlerRole = new iam.Role(this, 'HandlerRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'Data pipeline integration custom resource handler',
    });
    this.handlerLogGroup.grantWrite(this.handlerRole);
    acknowledgeLogGroup(this.handlerLogGroup);
    acknowledgeInlinePolicies(this.handlerRole);

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

    this.provider = new cr.Provider(this, 'Provider', {
      onEventHandler: this.onEventFunction,
      logGroup: this.frameworkLogGroup,
      frameworkOnEventRole: this.frameworkRole,
    });
    this.acknowledgeFramework(this.provider);

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

  /** Service token of the provider with waiter (created on first call). */
  public waiterServiceToken(): string {
    if (!this.waiter) {
      const isComplete = this.createHandler('IsComplete', HandlerExports.IS_COMPLETE);
      const waiterLogs = new logs.LogGroup(this, 'WaiterLogs', {
        retention: logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      const completeRole = new iam.Role(this, 'WaiterFrameworkRole', {
        assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
        description: 'Data pipeline integration custom resource provider framework (waiter)',
      });
      this.frameworkLogGroup.grantWrite(completeRole);
      acknowledgeLogGroup(waiterLogs);
      acknowledgeInlinePolicies(completeRole);
      this.waiter = new cr.Provider(this, 'WaiterProvider', {
        onEventHandler: this.onEventFunction,
        isCompleteHandler: isComplete,
        queryInterval: Duration.seconds(30),
        // CloudFormation waits at most one hour for a custom resource: a longer waiter would outlive it.
        totalTimeout: Duration.hours(1),
        logGroup: this.frameworkLogGroup,
        frameworkOnEventRole: this.frameworkRole,
        // A separate role: sharing the onEvent role would make a dependency cycle
        // (onEvent role policy -> state machine -> isComplete function -> role policy).
        frameworkCompleteAndTimeoutRole: completeRole,
        disableWaiterStateMachineLogging: false,
        waiterStateMachineLogOptions: {
          destination: waiterLogs,
          level: sfn.LogLevel.ALL,
          includeExecutionData: false,
        },
      });
      this.acknowledgeFramework(this.waiter);
      const stateMachine = this.waiter.node.findChild('waiter-state-machine');
      acknowledgeWildcards(stateMachine, [{
        pattern: /^\*$/,
        reason: 'Generated by aws-cdk-lib for the waiter state machine\'s logging: CloudWatch Logs delivery actions (logs:CreateLogDelivery, ...) do not support resource-level permissions.',
      }]);
      acknowledge(stateMachine, 'AwsSolutions-SF2', 'The waiter state machine of aws-cdk-lib custom-resources offers no X-Ray option; it only polls the handler, which logs every step.');
      acknowledge(stateMachine, 'Serverless-StepFunctionStateMachineXray', 'The waiter state machine of aws-cdk-lib custom-resources offers no X-Ray option; it only polls the handler, which logs every step.');
      acknowledgeCompliance(stateMachine, 'IAMNoInlinePolicy', 'The state machine\'s role and its policy are made by aws-cdk-lib custom-resources for this state machine alone.');
    }
    return this.waiter.serviceToken;
  }

  /**
   * Let the handler functions use the lifecycle journal table `tableName` of the stack's account and region (once
   * per table): create it on first use, read and write its items. Nothing else in DynamoDB.
   */
  public grantJournal(tableName: string): void {
    if (this.grantedJournals.has(tableName)) {
      return;
    }
    this.grantedJournals.add(tableName);
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

  private acknowledgeFramework(provider: cr.Provider): void {
    for (const child of provider.node.children) {
      if (child instanceof lambda.Function) {
        acknowledge(child, 'AwsSolutions-L1', 'The runtime of the aws-cdk-lib custom-resources framework functions is chosen by aws-cdk-lib and cannot be set; the handler itself runs on the newest Node.js runtime.');
        acknowledge(child, 'Serverless-LambdaLatestVersion', 'The runtime of the aws-cdk-lib custom-resources framework functions is chosen by aws-cdk-lib and cannot be set; the handler itself runs on the newest Node.js runtime.');
        // The framework's default (128 MB) is what the Serverless pack flags; its functions only relay events.
        (child.node.defaultChild as lambda.CfnFunction).memorySize = 256;
        acknowledgeDeployTimeFunction(child, child.node.id === 'framework-onEvent'
          ? 'invoked asynchronously by CloudFormation; the framework reports every outcome, failures included, to the stack\'s response URL, '
            + 'so a dead-letter queue would hold nothing that CloudFormation does not already show (and end with its timeout)'
          : 'invoked synchronously by the waiter state machine, which reports failures to CloudFormation; a dead-letter queue would never receive an event');
      }
    }
  }

  private createHandler(id: string, exportName: string): lambda.Function {
    const fn = new lambda.Function(this, id, {
      code: this.code,
      handler: `index.${exportName}`,
      runtime: HANDLER_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.minutes(10),
      role: this.handlerRole,
      logGroup: this.handlerLogGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      description: `Data pipeline integration custom resource handler (${exportName})`,
    });
    acknowledgeDeployTimeFunction(fn, 'invoked synchronously by the provider framework, which reports its failures to CloudFormation; '
      + 'a dead-letter queue would never receive an event');
    return fn;
  }
}

/**
 * Acknowledgements (HIPAA Security, NIST 800-53 R5, Serverless) of a deploy-time function of the provider: what it
 * does not have and why. Each names the rule and the resource.
 */
function acknowledgeDeployTimeFunction(fn: lambda.Function, dlqReason: string): void {
  acknowledgeCompliance(fn, 'LambdaDLQ', `A deploy-time function: ${dlqReason}.`);
  acknowledgeCompliance(fn, 'LambdaConcurrency', 'A deploy-time function run once per resource event; reserved concurrency would take capacity from the '
    + 'account for functions that are idle between deployments, and CloudFormation already bounds how many run at once.');
  acknowledgeCompliance(fn, 'LambdaInsideVPC', 'It calls the service\'s public HTTPS interface and AWS APIs (Secrets Manager, DynamoDB, IAM, STS) and '
    + 'reaches no resource inside a VPC; a VPC would need a NAT gateway or endpoints for no gain.');
  acknowledge(fn, 'Serverless-LambdaDLQ', `A deploy-time function: ${dlqReason}.`);
  acknowledge(fn, 'Serverless-LambdaTracing', 'A deploy-time function: every event and every service call is logged as one JSON line (request ID, '
    + 'path, status, duration), which is what an operator reads; X-Ray traces would add cost and wildcard permissions.');
}

/** Acknowledgements of the provider's log groups for the HIPAA Security and NIST 800-53 R5 packs. */
function acknowledgeLogGroup(group: logs.LogGroup): void {
  acknowledgeCompliance(group, 'CloudWatchLogGroupEncrypted', 'CloudWatch Logs encrypts these logs at rest with service-managed keys; '
    + 'they hold no secret (the handler redacts the refresh token and tokens from every line and reason), so a customer-managed key '
    + 'would add cost and a key policy without protecting more.');
}

/** Acknowledgements of inline policies (grants) on the provider's roles for the HIPAA Security and NIST 800-53 R5 packs. */
function acknowledgeInlinePolicies(role: iam.Role): void {
  acknowledgeCompliance(role, 'IAMNoInlinePolicy', 'The policy is made by aws-cdk-lib grants for this role alone and names only this stack\'s '
    + 'resources; an inline policy cannot be attached to another principal, which a managed policy could.');
}
