import { Annotations, DefaultStackSynthesizer, Fn, RemovalPolicy, Resource, Stack, Tags, Token } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct, IConstruct } from 'constructs';
import { acknowledgeCompliance } from './nag';
import { invalid } from './validation';
import {
  DEFAULT_JOURNAL_TABLE, JOURNAL_GUARD_SID, JOURNAL_ITEM_WRITES, JOURNAL_MARKER_TAG, JOURNAL_MARKER_VALUE, JOURNAL_TABLE_CHANGES,
  JOURNAL_WRITERS_SID, journalWriterPath,
} from '../contract';

/**
 * A lifecycle journal: the DynamoDB table in which the provider records what each resource made, the only proof that
 * a service record is a stack's (docs/handler.md, "The lifecycle journal").
 */
export interface ILifecycleJournal extends IConstruct {
  /** The table's name. */
  readonly tableName: string;
  /** The table's ARN. */
  readonly tableArn: string;
  /** The table, for grants of your own (read-only tools, dashboards). */
  readonly table: dynamodb.ITable;
}

/** Properties of a `LifecycleJournal`. */
export interface LifecycleJournalProps {
  /**
   * The table's name. Every app of the account and region should use the same journal: it is how stacks know each
   * other's records.
   *
   * @default 'dpi-lifecycle-journal'
   */
  readonly tableName?: string;

  /**
   * ARNs of the IAM roles or users besides the providers that may write the journal's items and change its table and
   * policy: the operators who run `dpi journal resolve` or `dpi orphans --fix`, and the role that deploys the journal's
   * stack when it is not the CDK bootstrap's CloudFormation execution role. For a role's sessions, give the role's ARN.
   * No wildcards.
   *
   * @default - only the providers' roles may write items; only the CDK bootstrap's execution role may change the table
   */
  readonly maintainerArns?: string[];
}

/** An IAM role or user ARN without wildcards (a maintainer). */
const PRINCIPAL_ARN = /^arn:aws[a-z-]*:iam::\d{12}:(role|user)\/[\w+=,.@/-]+$/;

/**
 * The lifecycle journal, declared: a DynamoDB table (`pk`, `sk`; on demand) with point-in-time recovery, deletion
 * protection and a `RETAIN` removal policy, tagged as a journal, whose resource policy denies every item write except
 * to the providers' roles (placed under the IAM path `/dpi-journal/<table name>/` by the library) and the
 * `maintainerArns`, and every change of the table, its tags and its policy except to the `maintainerArns` and the role
 * that deploys the journal's stack (the CDK bootstrap's CloudFormation execution role).
 *
 * Declare it once per account and region, in a stack of its own (termination protection on), and give it to every
 * `ServiceConnection` (`journal`); in other apps, `LifecycleJournal.fromTableName`. The handler checks the table
 * before its first use (key schema, the journal tag, deletion protection, the write fence) and never creates it.
 *
 * @example
 * // In a stack of its own (terminationProtection: true), once per account and region:
 * const journal = new LifecycleJournal(this, 'Journal', {
 *   maintainerArns: ['arn:aws:iam::123456789012:role/Operators'],
 * });
 * // In the application stacks (the same app), or LifecycleJournal.fromTableName in other apps:
 * new ServiceConnection(this, 'Dpi', {
 *   singleOriginUrl: 'https://api.example-dpi.com',
 *   refreshToken: secretsmanager.Secret.fromSecretNameV2(this, 'Token', 'dpi/refresh-token'),
 *   journal,
 * });
 */
export class LifecycleJournal extends Construct implements ILifecycleJournal {
  /**
   * A journal declared elsewhere (another app's `LifecycleJournal`), by its table name in this stack's account and
   * region. The handler checks it as it checks a declared one.
   */
  public static fromTableName(scope: Construct, id: string, tableName: string): ILifecycleJournal {
    class Imported extends Resource implements ILifecycleJournal {
      public readonly tableName = tableName;
      public readonly table = dynamodb.Table.fromTableName(this, 'Table', tableName);
      public readonly tableArn = this.table.tableArn;
    }
    const imported = new Imported(scope, id);
    checkTableName(imported, tableName);
    return imported;
  }

  public readonly tableName: string;
  public readonly tableArn: string;
  public readonly table: dynamodb.ITable;

  constructor(scope: Construct, id: string, props: LifecycleJournalProps = {}) {
    super(scope, id);
    const tableName = props.tableName ?? DEFAULT_JOURNAL_TABLE;
    checkTableName(this, tableName);
    const maintainers = props.maintainerArns ?? [];
    for (const arn of maintainers) {
      if (!Token.isUnresolved(arn) && !PRINCIPAL_ARN.test(arn)) {
        throw invalid(this, 'maintainerArns', arn, 'is not an IAM role or user ARN without wildcards',
          'give role or user ARNs, e.g. arn:aws:iam::123456789012:role/Operators');
      }
    }
    const stack = Stack.of(this);
    // The providers' roles, by their IAM path: session tags cannot make another principal one.
    const writers = stack.formatArn({ service: 'iam', region: '', resource: 'role', resourceName: `${journalWriterPath(tableName).slice(1)}*` });
    // CloudFormation's role for this stack (the CDK bootstrap's), which must still update the table and its policy.
    let top = stack;
    while (top.nestedStackParent) top = top.nestedStackParent;
    const deployer = top.synthesizer instanceof DefaultStackSynthesizer ? Fn.sub(top.synthesizer.cloudFormationExecutionRoleArn) : undefined;
    const guardians = [...maintainers, ...(deployer ? [deployer] : [])];
    if (guardians.length === 0) {
      throw invalid(this, 'maintainerArns', '[]', 'is empty and the stack\'s synthesizer names no CloudFormation execution role',
        'give the ARN of the role that deploys this stack (and of the operators), or the table could not be changed again');
    }
    const deny = (sid: string, actions: string[], except: string[]): iam.PolicyStatement => new iam.PolicyStatement({
      sid,
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions,
      // A resource policy names its own table as `*` (the table's ARN would be a circular reference).
      resources: ['*'],
      conditions: { ArnNotLike: { 'aws:PrincipalArn': except } },
    });
    const policy = new iam.PolicyDocument({
      statements: [
        deny(JOURNAL_WRITERS_SID, JOURNAL_ITEM_WRITES, [writers, ...maintainers]),
        deny(JOURNAL_GUARD_SID, JOURNAL_TABLE_CHANGES, guardians),
      ],
    });
    const table = new dynamodb.Table(this, 'Table', {
      tableName,
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      resourcePolicy: policy,
    });
    Tags.of(table).add(JOURNAL_MARKER_TAG, JOURNAL_MARKER_VALUE);
    acknowledgeCompliance(table, 'DynamoDBInBackupPlan', 'Point-in-time recovery (35 days) and deletion protection are on; an AWS Backup plan '
      + 'is the account\'s choice: add the table to one with backup.BackupPlan.addSelection.');
    this.table = table;
    this.tableName = tableName;
    this.tableArn = table.tableArn;
    if (!Stack.of(this).terminationProtection) {
      Annotations.of(this).addWarningV2('data-pipeline-integration-cdk:journal-termination-protection',
        `the lifecycle journal ${tableName} is in stack ${Stack.of(this).stackName}, whose termination protection is off: its table is kept when `
        + 'the stack is deleted (RETAIN), but the stack cannot then be deployed again under the same table name; set terminationProtection: true');
    }
  }
}

function checkTableName(scope: IConstruct, tableName: string): void {
  if (!Token.isUnresolved(tableName) && !/^[A-Za-z0-9_.-]{3,255}$/.test(tableName)) {
    throw invalid(scope, 'tableName', tableName, 'is not a DynamoDB table name', 'use 3 to 255 letters, digits, underscores, hyphens and dots');
  }
}
