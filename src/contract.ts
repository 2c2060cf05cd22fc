/**
 * The contract between the constructs (which write custom resource properties
 * into the template), the handler (which reads them at deploy time) and the
 * local lifecycle runner (which replays them against the emulator).
 *
 * Not part of the public API (not exported from `index.ts`).
 *
 * CloudFormation delivers every scalar property value as a string: numbers and
 * booleans written by the constructs arrive as `"123"` / `"true"`. Handlers must
 * coerce; the local runner stringifies scalars the same way.
 */

/** Names of the handler's exports (Lambda handler = `index.<name>`). */
export const HandlerExports = {
  ON_EVENT: 'onEvent',
  IS_COMPLETE: 'isComplete',
} as const;

/** Where the bundled handler lives, relative to the package root. */
export const HANDLER_ASSET_DIR = 'assets/handler/index';

/** Connection settings carried by every resource (`Connection` property). */
export interface ConnectionProperties {
  readonly BaseUrl: string;
  readonly SubscriptionsUrl: string;
  readonly AccountUrl: string;
  readonly UserUrl: string;
  readonly RemoteIdentityUrl: string;
  readonly AuthUrl: string;
  /** ARN of the Secrets Manager secret holding the refresh token (read at run time). */
  readonly RefreshTokenSecretArn: string;
  /** Looked up through the account service when absent. */
  readonly AccountId?: string;
  /** Looked up through the user service when absent. */
  readonly UserId?: string;
  /**
   * Name of the lifecycle journal's DynamoDB table in the deploying account and region (shared by every
   * stack there; the handler creates it on first use). Absent in templates of older versions: the
   * handler then uses `DEFAULT_JOURNAL_TABLE`.
   */
  readonly JournalTableName?: string;
  /**
   * `product_parameters` key under which a notification pipeline's upstream subscriptions map is stored
   * when product 107's `required_meta_fields` names no key for it. Default `subscriptions`.
   */
  readonly PipelineSubscriptionsKey?: string;
  /**
   * `product_parameters` key under which a notification pipeline's full `meta` is stored when product
   * 107's `required_meta_fields` names no key for it. Default `meta`.
   */
  readonly PipelineMetaKey?: string;
}

/** Default name of the lifecycle journal table (one per AWS account and region). */
export const DEFAULT_JOURNAL_TABLE = 'dpi-lifecycle-journal';

/**
 * The fields of a `Connection` that the provider binds at synth time (docs/handler.md, "What the provider binds"): the
 * service addresses, the refresh token secret and the journal table. An event whose connection differs from every
 * bound connection in one of them is refused before the secret is read or any call is made.
 */
export const BOUND_CONNECTION_FIELDS = [
  'BaseUrl', 'SubscriptionsUrl', 'AccountUrl', 'UserUrl', 'RemoteIdentityUrl', 'AuthUrl', 'RefreshTokenSecretArn', 'JournalTableName',
] as const;

/**
 * Environment variable of the provider's handler functions: the connections the provider serves, a JSON array with one
 * array per connection holding the values of `BOUND_CONNECTION_FIELDS` in that order (tokens are resolved by
 * CloudFormation, as in the resources' `Connection` property).
 */
export const BOUND_CONNECTIONS_ENV = 'DPI_BOUND_CONNECTIONS';

/**
 * Environment variable of the provider's handler functions: the stacks the provider serves, a JSON array of stack
 * names; `<name>-*` stands for the nested stacks of stack `<name>` that use its provider (a fleet's: CloudFormation
 * names a nested stack `<parent name>-<logical ID>-<suffix>`).
 */
export const BOUND_STACKS_ENV = 'DPI_BOUND_STACKS';

/**
 * Environment variable of the provider's handler functions: the ID of the provider's stack (`AWS::StackId`). An event
 * of a stack named like its nested stacks is served only when CloudFormation gives this stack as its parent or root
 * (src/handler/binding.ts, `proveNestedStack`).
 */
export const BOUND_STACK_ID_ENV = 'DPI_BOUND_STACK_ID';

/**
 * Environment variable of a `SubscriptionMonitor`'s or `DriftMonitor`'s function: the run its rule sends (as JSON, all
 * but the monitor's subscription list). A run that differs in any field is refused (src/handler/scheduled-binding.ts).
 */
export const BOUND_RUN_ENV = 'DPI_BOUND_RUN';

/** The values of `BOUND_CONNECTION_FIELDS` of a connection, in that order (the journal table's default filled in). */
export function boundConnectionValues(connection: ConnectionProperties): string[] {
  return BOUND_CONNECTION_FIELDS.map((f) => (f === 'JournalTableName' ? connection[f] ?? DEFAULT_JOURNAL_TABLE : connection[f]));
}

/** Tag of a declared lifecycle journal's table (`LifecycleJournal`): the handler uses a declared table only when it carries it. */
export const JOURNAL_MARKER_TAG = 'dpi:lifecycle-journal';
/** Value of `JOURNAL_MARKER_TAG`. */
export const JOURNAL_MARKER_VALUE = 'v1';
/** Sid of a declared journal's resource policy statement that denies item writes to all but its writers. */
export const JOURNAL_WRITERS_SID = 'DpiJournalWritersOnly';
/** Sid of a declared journal's resource policy statement that denies changes of the table and its policy to all but its maintainers. */
export const JOURNAL_GUARD_SID = 'DpiJournalTableGuard';
/** The item writes only a declared journal's writers (and maintainers) may make. */
export const JOURNAL_ITEM_WRITES = [
  'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem',
  'dynamodb:PartiQLInsert', 'dynamodb:PartiQLUpdate', 'dynamodb:PartiQLDelete',
];
/** The changes of a declared journal's table, tags and policy only its maintainers (and the deploying role) may make. */
export const JOURNAL_TABLE_CHANGES = [
  'dynamodb:PutResourcePolicy', 'dynamodb:DeleteResourcePolicy', 'dynamodb:UpdateTable', 'dynamodb:DeleteTable',
  'dynamodb:UpdateContinuousBackups', 'dynamodb:TagResource', 'dynamodb:UntagResource', 'dynamodb:CreateTableReplica',
  'dynamodb:UpdateTimeToLive',
];
/**
 * The IAM path of the roles that may write a declared journal's items (the providers' roles): only whoever may create
 * roles can place one there, and session tags cannot change a principal's ARN.
 */
export function journalWriterPath(tableName: string): string {
  return `/dpi-journal/${tableName}/`;
}
/**
 * Environment variable of the provider's handler functions: the comma-separated names of the declared journals
 * (`ServiceConnectionProps.journal`) among the supplied ones, checked for the tag, deletion protection and the write fence.
 */
export const DECLARED_JOURNAL_TABLES_ENV = 'DPI_DECLARED_JOURNAL_TABLES';
/**
 * Environment variable of the provider's handler functions: the comma-separated names of the journal tables that
 * connections supplied (`journalTable`, and the declared journals): checked, never created.
 */
export const PROVIDED_JOURNAL_TABLES_ENV = 'DPI_PROVIDED_JOURNAL_TABLES';

/**
 * The provider function's request budget (src/handler/rate-budget.ts): `<requests>/<seconds>` that every container of
 * the account and region shares through the lifecycle journal table, or `off`. The constructs set the service's
 * documented limit; the local runner sets its emulator's.
 */
export const REQUEST_BUDGET_ENV = 'DPI_REQUEST_BUDGET';
/**
 * Environment variable of the provider's handler functions: `1` when every provider framework in front of them has an
 * isComplete waiter, so an event whose wait for the service's rate limit would pass the invocation's deadline may be
 * answered with a continuation that isComplete resumes (src/handler/continuation.ts). Without it, such an event fails
 * as before: a continuation answered to a framework without waiter would tell CloudFormation the resource is done.
 */
export const CONTINUATION_ENV = 'DPI_CONTINUATION';
/**
 * Environment variable of the provider's handler functions: the comma-separated names of the journal tables the app
 * asked the handler to create (`ServiceConnectionProps.journalTableName`). The handler creates no other table: one it
 * was not told to create is checked (key schema) and used only if it exists.
 */
export const CREATED_JOURNAL_TABLES_ENV = 'DPI_CREATED_JOURNAL_TABLES';

/**
 * The request budget's margin, added to the window between two requests of one slot (src/client/budget.ts): the
 * clients' clocks and the service's may differ a little, and a request sent just as the window ends would be refused.
 * The fleet's deploy waves (src/notifications/fleet-waves.ts) count with it too.
 */
export const BUDGET_MARGIN_MS = 1_000;

/** Default `product_parameters` keys of a pipeline's result parts (see `ConnectionProperties`). */
export const DEFAULT_PIPELINE_METADATA_KEYS = { subscriptions: 'subscriptions', meta: 'meta' } as const;

/** Attributes (`Data`) of `Custom::DpiNotificationPipeline`. */
export const NotificationPipelineAttributes = {
  SUBSCRIPTION_ID: 'SubscriptionId',
  /** Comma-separated type names that were subscribed. */
  SUBSCRIBED_TYPES: 'SubscribedTypes',
  /** Comma-separated type names that failed (only with PartialFailure ALLOW). */
  FAILED_TYPES: 'FailedTypes',
  BUCKET_NAME: 'BucketName',
  PREFIX: 'Prefix',
  NOTIFICATION_QUEUE_ARN: 'NotificationQueueArn',
  DELIVERY_STREAM_ARN: 'DeliveryStreamArn',
  SHARED_PIPELINE_ID: 'SharedPipelineId',
  /** Event-bus path: the bus the service's rule is on (`meta.event_bus_name`). */
  EVENT_BUS_NAME: 'EventBusName',
  /** Event-bus path: the rule on that bus (`meta.eventbridge_rule_id`). */
  EVENT_BRIDGE_RULE_ID: 'EventBridgeRuleId',
  /** Event-bus path: the destination registered upstream (`meta.eventbridge_destination_id`). */
  EVENT_BRIDGE_DESTINATION_ID: 'EventBridgeDestinationId',
  /** Queue path: the destination registered upstream (`meta.sqs_destination_id`). */
  SQS_DESTINATION_ID: 'SqsDestinationId',
} as const;
