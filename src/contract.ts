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

/** Custom resource types served by the single provider of a stack. */
export const ResourceTypes = {
  NOTIFICATION_PIPELINE: 'Custom::DpiNotificationPipeline',
  LEGACY_NOTIFICATION_PIPELINE: 'Custom::DpiLegacyNotificationPipeline',
  SUBSCRIPTION: 'Custom::DpiSubscription',
  HISTORY_REQUEST: 'Custom::DpiHistoryRequest',
  PRODUCT_ORDER_JOBS: 'Custom::DpiProductOrderJobs',
} as const;

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

/** Default `product_parameters` keys of a pipeline's result parts (see `ConnectionProperties`). */
export const DEFAULT_PIPELINE_METADATA_KEYS = { subscriptions: 'subscriptions', meta: 'meta' } as const;

interface Base {
  readonly ServiceToken?: string;
  readonly Connection: ConnectionProperties;
}

/** `Custom::DpiNotificationPipeline` (product 107, unified). Physical ID = the product-107 subscription ID. */
export interface NotificationPipelineProperties extends Base {
  readonly RemoteIdentityId: string;
  /** `seller` | `vendor` */
  readonly AccountType: string;
  readonly NotificationTypes: string[];
  readonly RoleArn: string;
  readonly EbToFhRoleArn?: string;
  readonly DeploymentRegion: string;
  readonly StorageGroupId?: string;
  readonly Name?: string;
  /** `FAIL` | `ALLOW` */
  readonly PartialFailure: string;
  /** An existing product-107 subscription (pipeline) to adopt instead of creating one. */
  readonly AdoptId?: string;
  /**
   * `retain` | `destroy`: what the handler does on Delete (the constructs always render the resource with
   * DeletionPolicy and UpdateReplacePolicy `Delete`, so CloudFormation always sends it). `retain` releases the
   * record (journal state `released`, no call that ends it); `destroy` ends it. Absent in templates of older
   * versions: `destroy`.
   */
  readonly RemovalPolicy?: string;
}

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

/** `Custom::DpiLegacyNotificationPipeline` (product 86, adopt only). Physical ID = the subscription ID. */
export interface LegacyNotificationPipelineProperties extends Base {
  readonly SubscriptionId: string;
  readonly RemoteIdentityId: string;
  readonly QueueArn: string;
  readonly NotificationTypes: string[];
  /**
   * `true` | `false`. When `true`, the resource's Create/Update DELETEs the legacy
   * pipeline (so a unified pipeline that depends on it can be created in the
   * same deploy); Delete of a retired resource does nothing remotely.
   */
  readonly Retired: string;
  /**
   * `retain` | `destroy`: what the handler does on Delete (the constructs always render the resource with
   * DeletionPolicy and UpdateReplacePolicy `Delete`, so CloudFormation always sends it). `retain` releases the
   * record (journal state `released`, no call that ends it); `destroy` ends it. Absent in templates of older
   * versions: `destroy`.
   */
  readonly RemovalPolicy?: string;
}

/** `Custom::DpiSubscription`. Physical ID = the subscription ID. Attributes: `SubscriptionId`, `Status`. */
export interface SubscriptionProperties extends Base {
  readonly ProductId: string;
  readonly StorageGroupId?: string;
  readonly RemoteIdentityId?: string;
  /** Flat string map, excluding `stage_ids` (see StageIds). */
  readonly ProductParameters?: Record<string, string>;
  /** Stage IDs (each >= 1000); the handler encodes them as the stringified JSON array `stage_ids`. */
  readonly StageIds?: string[];
  /** `active` | `paused` */
  readonly Status: string;
  readonly Name?: string;
  /** ISO 8601 datetime; default: the time of creation. */
  readonly DateStart?: string;
  /** `invalid` | `cancelled` */
  readonly OnDelete: string;
  /** An existing subscription to adopt instead of creating one. */
  readonly AdoptId?: string;
  /**
   * `retain` | `destroy`: what the handler does on Delete (the constructs always render the resource with
   * DeletionPolicy and UpdateReplacePolicy `Delete`, so CloudFormation always sends it). `retain` releases the
   * record (journal state `released`, no call that ends it); `destroy` ends it. Absent in templates of older
   * versions: `destroy`.
   */
  readonly RemovalPolicy?: string;
}

/** `Custom::DpiHistoryRequest`. Physical ID = the history transaction ID. Attributes: `HistoryTransactionId`, `Status`. */
export interface HistoryRequestProperties extends Base {
  readonly SubscriptionId: string;
  readonly StartDate?: string;
  readonly EndDate?: string;
  readonly Dates?: string[];
  readonly StageId?: string;
  readonly ProductId?: string;
  /** `YYYY-MM-DD HH:MM:SS` */
  readonly StartTime?: string;
  /** `true` | `false` */
  readonly WaitForCompletion: string;
  /** Seconds the deploy may wait (for the ceiling, and for completion when asked). */
  readonly TimeoutSeconds: string;
  /** An existing history transaction to adopt instead of requesting one. */
  readonly AdoptId?: string;
}

/** `Custom::DpiProductOrderJobs`. Physical ID = the primary job ID. Attributes: `PrimaryJobId`, `JobIds`, `BatchCount`. */
export interface ProductOrderJobsProperties extends Base {
  readonly SubscriptionId: string;
  readonly OrderIds: string[];
  /** default 1000 */
  readonly StageId?: string;
}
