import { Annotations, RemovalPolicy, Resource, Stack, Tags, Token } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct, IConstruct } from 'constructs';
import { acknowledgeCompliance } from './nag';
import { invalid } from './validation';
import { DEFAULT_JOURNAL_TABLE, JOURNAL_MARKER_TAG, JOURNAL_MARKER_VALUE, JOURNAL_WRITER_TAG, JOURNAL_WRITERS_SID } from '../contract';

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
   * ARNs (wildcards allowed, e.g. `arn:aws:iam::123456789012:role/Operators`) of the principals besides the providers
   * that may write the journal's items: the operators who run `dpi journal resolve` or `dpi orphans --fix`. For a
   * role's sessions, give the role's ARN.
   *
   * @default - only the providers' roles (tagged `dpi:journal-writer`) may write
   */
  readonly maintainerArns?: string[];
}

/** The item writes the journal's resource policy allows only to its writers. */
const ITEM_WRITES = [
  'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem',
  'dynamodb:PartiQLInsert', 'dynamodb:PartiQLUpdate', 'dynamodb:PartiQLDelete',
];

/**
 * The lifecycle journal, declared: a DynamoDB table (`pk`, `sk`; on demand) with point-in-time recovery, deletion
 * protection and a `RETAIN` removal policy, tagged as a journal, whose resource policy denies every item write except
 * to the providers' roles (tagged `dpi:journal-writer=<table name>` by the library) and the `maintainerArns`.
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
    for (const arn of props.maintainerArns ?? []) {
      if (!Token.isUnresolved(arn) && !/^arn:[a-z-]+:(iam|sts)::(\d{12}|\*):[^\s]+$/.test(arn)) {
        throw invalid(this, 'maintainerArns', arn, 'is not an IAM principal ARN', 'give role or user ARNs, e.g. arn:aws:iam::123456789012:role/Operators');
      }
    }
    const notWriter: Record<string, unknown> = { StringNotEquals: { [`aws:PrincipalTag/${JOURNAL_WRITER_TAG}`]: tableName } };
    if ((props.maintainerArns ?? []).length > 0) notWriter.ArnNotLike = { 'aws:PrincipalArn': props.maintainerArns };
    const fence = new iam.PolicyStatement({
      sid: JOURNAL_WRITERS_SID,
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ITEM_WRITES,
      // A resource policy names its own table as `*` (the table's ARN would be a circular reference).
      resources: ['*'],
      conditions: notWriter,
    });
    const table = new dynamodb.Table(this, 'Table', {
      tableName,
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      resourcePolicy: new iam.PolicyDocument({ statements: [fence] }),
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
