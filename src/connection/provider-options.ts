import { Duration, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import { IConstruct } from 'constructs';
import { invalid } from './validation';

/**
 * Options of the stack's single custom resource provider (the handler functions and the aws-cdk-lib
 * `custom-resources` framework in front of them), as aws-cdk-lib's `Provider` offers them.
 *
 * One provider serves every resource of a stack: give these options on one `ServiceConnection` of the stack (or the
 * same objects on each); different options on a second connection of the stack are a synth error.
 */
export interface ProviderOptions {
  /**
   * The VPC of the handler functions and of the framework functions (as aws-cdk-lib's `Provider` does). The
   * functions call the service's public HTTPS interface and AWS APIs (Secrets Manager, DynamoDB, IAM, STS, Lambda,
   * Step Functions, CloudFormation when a fleet's nested stacks use the provider, the CloudFormation response URL in
   * S3): the subnets need a route to them (a NAT gateway, or
   * VPC endpoints plus a proxy for the service). The library grants its roles the network-interface permissions a
   * function in a VPC needs.
   *
   * @default - not in a VPC
   */
  readonly vpc?: ec2.IVpc;

  /**
   * Where in `vpc` the functions are placed. Only with `vpc`.
   *
   * @default - the private subnets of `vpc` (aws-cdk-lib's default)
   */
  readonly vpcSubnets?: ec2.SubnetSelection;

  /**
   * Security groups of the functions. Only with `vpc`.
   *
   * @default - one security group per function, all outbound traffic allowed, no inbound (aws-cdk-lib's default)
   */
  readonly securityGroups?: ec2.ISecurityGroup[];

  /**
   * An existing role for the handler functions (`onEvent` and, with a `HistoryRequest`, `isComplete`) instead of the
   * one the library creates. It must trust `lambda.amazonaws.com`. The library adds its statements to it with
   * `addToPrincipalPolicy` (writing to the handler's log group, reading each connection's refresh token secret,
   * the lifecycle journal table, `iam:GetRole` on the roles of notification pipelines, network interfaces with
   * `vpc`); for an immutable role (`Role.fromRoleArn(..., { mutable: false })`, `withoutPolicyUpdates()`) those
   * statements are dropped, and the role itself must allow them (docs/constructs.md lists them).
   *
   * @default - a role created by the library, with inline grants only
   */
  readonly role?: iam.IRole;

  /**
   * A permissions boundary applied to every role the library creates for the provider (the handler role unless
   * `role` is given, the framework roles and, with a `HistoryRequest`, the waiter's roles). A given `role` is left as
   * it is.
   *
   * @default - no permissions boundary
   */
  readonly permissionsBoundary?: iam.IManagedPolicy;

  /**
   * Retention of the handler's log group, which the library creates and deletes with the stack. Not with `logGroup`.
   *
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;

  /**
   * An existing log group for the handler functions instead of the one the library creates (its retention, key and
   * removal policy are yours). The handler role is granted to write to it, and failure reasons shown by CloudFormation
   * name it. Not with `logRetention`.
   *
   * @default - a log group created by the library (`logRetention`, deleted with the stack)
   */
  readonly logGroup?: logs.ILogGroup;

  /**
   * Memory of the handler functions, in MB (128 to 10240).
   *
   * @default 256
   */
  readonly memorySize?: number;

  /**
   * Timeout of the handler functions, from 1 to 15 minutes. The handler stops starting service calls before it and
   * reports what it did; CloudFormation waits at most one hour for a custom resource.
   *
   * @default Duration.minutes(10)
   */
  readonly timeout?: Duration;

  /**
   * The service's rate limit that every container of the handler shares: the requests allowed per client address in
   * `rateLimitWindow`. The handler's containers take their requests' turns from one budget in the lifecycle journal
   * table (shared by every stack of the account and region that uses the same table and service address), on the
   * assumption that they reach the service from one address (a NAT gateway, or Lambda's shared egress). Set the limit
   * your service account has if it differs; `0` turns the shared budget off (each container then paces itself by the
   * service's 429s alone).
   *
   * @default 1000 (the vendor's documented limit: 1,000 requests per 5 minutes)
   */
  readonly rateLimitRequests?: number;

  /**
   * The window of `rateLimitRequests`, from 1 second to 1 hour.
   *
   * @default Duration.minutes(5)
   */
  readonly rateLimitWindow?: Duration;
}

/** The vendor's documented rate limit (`api-usage-docs/rate-limiting.md`): 1,000 requests per 5 minutes per address. */
export const DEFAULT_RATE_LIMIT_REQUESTS = 1000;

/** The request budget the handler's environment carries (`DPI_REQUEST_BUDGET`): `<requests>/<seconds>`, or `off`. */
export function requestBudgetSetting(options: ProviderOptions | undefined): string {
  const requests = options?.rateLimitRequests ?? DEFAULT_RATE_LIMIT_REQUESTS;
  if (requests === 0) return 'off';
  return `${requests}/${(options?.rateLimitWindow ?? Duration.minutes(5)).toSeconds()}`;
}

/** Checks `options` (synth-time errors name the construct path and the value). */
export function validateProviderOptions(scope: IConstruct, options: ProviderOptions | undefined): void {
  if (!options) return;
  if (!options.vpc) {
    if (options.vpcSubnets) {
      throw invalid(scope, 'provider.vpcSubnets', describeSubnets(options.vpcSubnets), 'is given without provider.vpc', 'give provider.vpc too, or leave vpcSubnets out');
    }
    if (options.securityGroups) {
      throw invalid(scope, 'provider.securityGroups', options.securityGroups.map((g) => g.node.path).join(', '), 'is given without provider.vpc',
        'give provider.vpc too, or leave securityGroups out');
    }
  }
  if (options.logGroup && options.logRetention !== undefined) {
    throw invalid(scope, 'provider.logRetention', options.logRetention, `cannot be combined with provider.logGroup (${options.logGroup.node.path})`,
      'set the retention on your log group, or give logRetention alone for the library\'s log group');
  }
  const memory = options.memorySize;
  if (memory !== undefined && !Token.isUnresolved(memory) && !(Number.isInteger(memory) && memory >= 128 && memory <= 10240)) {
    throw invalid(scope, 'provider.memorySize', memory, 'is not a Lambda memory size', 'use an integer from 128 to 10240 (MB)');
  }
  const timeout = options.timeout;
  if (timeout !== undefined && !timeout.isUnresolved()) {
    const s = timeout.toSeconds();
    if (s < 60 || s > 900) {
      throw invalid(scope, 'provider.timeout', timeout.toHumanString(), 'is not accepted', 'use a timeout from Duration.minutes(1) to Duration.minutes(15)');
    }
  }
  validateRateLimit(scope, options);
}

function validateRateLimit(scope: IConstruct, options: ProviderOptions): void {
  const requests = options.rateLimitRequests;
  if (requests !== undefined && (Token.isUnresolved(requests) || !(Number.isInteger(requests) && (requests >= 0)))) {
    throw invalid(scope, 'provider.rateLimitRequests', requests, 'is not a request limit', 'use a positive integer (requests per rateLimitWindow), or 0 for no shared budget');
  }
  const window = options.rateLimitWindow;
  if (window !== undefined) {
    if (window.isUnresolved() || window.toMilliseconds() < 1000 || window.toMilliseconds() > 3_600_000 || window.toMilliseconds() % 1000 !== 0) {
      throw invalid(scope, 'provider.rateLimitWindow', window.isUnresolved() ? 'a token' : window.toHumanString(), 'is not accepted',
        'use whole seconds from Duration.seconds(1) to Duration.hours(1)');
    }
    if (requests === 0) {
      throw invalid(scope, 'provider.rateLimitWindow', window.toHumanString(), 'is given with rateLimitRequests: 0 (no shared budget)', 'leave one of them out');
    }
  }
}

function describeSubnets(s: ec2.SubnetSelection): string {
  const parts = [
    s.subnetType !== undefined ? `subnetType ${s.subnetType}` : '',
    s.subnetGroupName !== undefined ? `subnetGroupName ${s.subnetGroupName}` : '',
    s.availabilityZones ? `availabilityZones ${s.availabilityZones.join(',')}` : '',
    s.subnets ? `${s.subnets.length} subnets` : '',
  ].filter((p) => p !== '');
  return `{ ${parts.join(', ')} }`;
}

const KEYS: Array<keyof ProviderOptions> = [
  'vpc', 'vpcSubnets', 'securityGroups', 'role', 'permissionsBoundary', 'logRetention', 'logGroup', 'memorySize', 'timeout',
  'rateLimitRequests', 'rateLimitWindow',
];

/**
 * The options in which `a` (the provider's) and `b` (a later connection's) differ, each with both values (same objects,
 * same values; subnet selections compared by content).
 */
export function differingProviderOptions(a: ProviderOptions, b: ProviderOptions): string[] {
  return KEYS.filter((k) => !sameValue(a[k], b[k])).map((k) => `${k}: ${shown(a[k])} vs ${shown(b[k])}`);
}

function shown(v: unknown): string {
  if (v === undefined) return 'default';
  if (v instanceof Duration) return v.isUnresolved() ? 'a token' : v.toHumanString();
  if (Array.isArray(v)) return `[${v.map(shown).join(', ')}]`;
  if (typeof v === 'object' && v !== null && 'node' in v) return (v as IConstruct).node.path;
  if (isPlain(v)) return `{ ${Object.entries(v).map(([k, x]) => `${k}: ${shown(x)}`).join(', ')} }`;
  return String(v);
}

function sameValue(x: unknown, y: unknown): boolean {
  if (x === y) return true;
  if (x === undefined || y === undefined) return false;
  if (x instanceof Duration && y instanceof Duration) return !x.isUnresolved() && !y.isUnresolved() && x.toMilliseconds() === y.toMilliseconds();
  if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((v, i) => sameValue(v, y[i]));
  if (isPlain(x) && isPlain(y)) {
    const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
    return [...keys].every((k) => sameValue(x[k], y[k]));
  }
  return false;
}

function isPlain(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;
}

/** Whether any option is set. */
export function hasProviderOptions(options: ProviderOptions | undefined): boolean {
  return options !== undefined && KEYS.some((k) => options[k] !== undefined);
}

/** VPC placement of the provider's functions (as aws-cdk-lib's `Provider` takes it); nothing without `vpc`. */
export function networkPropsOf(options: ProviderOptions): {
  vpc?: ec2.IVpc; vpcSubnets?: ec2.SubnetSelection; securityGroups?: ec2.ISecurityGroup[];
} {
  const { vpc, vpcSubnets, securityGroups } = options;
  return vpc ? { vpc, vpcSubnets, securityGroups } : {};
}

/** What a function in a VPC needs to attach its network interfaces (the managed AWSLambdaVPCAccessExecutionRole's actions). */
export function grantNetworkInterfaces(role: iam.IRole): void {
  role.addToPrincipalPolicy(new iam.PolicyStatement({
    sid: 'VpcNetworkInterfaces',
    actions: ['ec2:CreateNetworkInterface', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets', 'ec2:DeleteNetworkInterface',
      'ec2:AssignPrivateIpAddresses', 'ec2:UnassignPrivateIpAddresses'],
    resources: ['*'],
  }));
}
