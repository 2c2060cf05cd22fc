/**
 * The vocabulary of `dpi plan`: what one deploy does to one `Custom::Dpi*` resource, in the service's terms.
 * Produced by the handler's own decision code (`planResource`), so the plan and the deploy cannot disagree.
 */

/**
 * What a deploy does to one resource.
 * - `create`: a new service record.
 * - `update`: updated in place; the record and its delivery resources stay.
 * - `rebuild`: updated in place, but the service cleans up and recreates delivery resources (a pipeline's queue
 *   and prefix change; consumers of the old queue stop receiving).
 * - `replace`: a new record is made and the old one ends (becomes `invalid`, with its history and jobs).
 * - `delete`: the record ends (the stack owns it and its removal policy is destroy).
 * - `retain`: the resource leaves the stack but its record is kept (retain policy, or adopted without destroy).
 * - `no-change`: nothing is sent.
 */
export type PlanAction = 'create' | 'update' | 'rebuild' | 'replace' | 'delete' | 'retain' | 'no-change';

/** All actions, in the order summaries print them. */
export const PLAN_ACTIONS: readonly PlanAction[] = ['create', 'update', 'rebuild', 'replace', 'delete', 'retain', 'no-change'];

/** A changing service call the handler will make (reads are not listed). */
export interface PlannedCall {
  readonly method: 'POST' | 'PATCH' | 'DELETE';
  /**
   * Path relative to the service address the call goes to, with known IDs filled in and `{new}` for an ID the
   * service assigns during the deploy, e.g. `/v2/sub/9001`, `/service/sp/notifications-unified/362/{new}`.
   */
  readonly path: string;
  /** Why the call is made, in one short phrase. */
  readonly purpose: string;
  /**
   * Set when the call depends on what a read shows during the deploy (the condition, e.g. "only if a read does not
   * show every declared value"); such a call may not be sent. Absent: the call is always made.
   */
  readonly when?: string;
}

/** One changed property, named as the construct prop names it. */
export interface PropertyChange {
  /** The construct prop, e.g. `productId`, `notificationTypes`. */
  readonly prop: string;
  readonly from?: unknown;
  readonly to?: unknown;
  /** What this change alone makes of the resource. */
  readonly effect: 'update' | 'rebuild' | 'replace';
}

/** The planned change of one resource. */
export interface PlanEntry {
  /** `Custom::DpiSubscription`, ... */
  readonly type: string;
  /** Stack name (for a nested stack: its construct path) and logical ID. */
  readonly stack: string;
  readonly logicalId: string;
  /** The construct path (`aws:cdk:path` metadata) when the template has it. */
  readonly constructPath?: string;
  /** The service record's ID as deployed (the physical ID), when there is one. */
  readonly physicalId?: string;
  readonly action: PlanAction;
  readonly changes: readonly PropertyChange[];
  readonly calls: readonly PlannedCall[];
  /** What happens to live records, one sentence each, e.g. `subscription 9001 becomes invalid`. */
  readonly effects: readonly string[];
  /**
   * Set when the handler refuses the change: the deploy fails with this reason (the handler's own) before it sends
   * anything, so `calls` is empty; `action` and `changes` still say what the declaration asks for. A reviewer gates
   * on it like on a risky action.
   */
  readonly failure?: string;
  /**
   * The worst case when a value of a decisive prop is known only at deploy time (a template parameter, an import, a
   * dynamic reference, or a resource the deploy may replace): the action if that value changes, when it is worse than
   * `action`. The effects name the prop and the source. `--fail-on` trips on it as on `action`.
   */
  readonly possibleAction?: PlanAction;
}

/** What `planResource` compares: the deployed and the declared properties of one resource. */
export interface PlanInput {
  readonly type: string;
  readonly stack: string;
  readonly logicalId: string;
  readonly constructPath?: string;
  readonly physicalId?: string;
  /** Properties as deployed; undefined when the resource is new. */
  readonly oldProps?: Record<string, unknown>;
  /** Properties as declared; undefined when the resource leaves the stack. */
  readonly newProps?: Record<string, unknown>;
  /**
   * What the lifecycle journal records of the deployed record, when the caller could read the journal (`--local`:
   * the local journal; CloudFormation mode: the journal table, when reachable); `{}` when the journal was read and
   * holds no live record of it. The handler decides ownership from the journal: a record adopted earlier stays
   * adopted (never ended) even after `existingSubscriptionId` was dropped from the declaration. Undefined: the
   * journal was not read; the plan then takes the deployed properties (adopted = they name an adoption, `AdoptId`;
   * removal policy = the deployed `RemovalPolicy`) and words an ending as "unless the lifecycle journal records it as
   * adopted", keeping the action `delete` (the safe side for a gate).
   */
  readonly journal?: PlanJournalHint;
  /**
   * Props whose declared value is known only at deploy time, by wire property name, each with its source in words
   * (e.g. `parameter IdentityParam`): the plan adds the action it would be if that value changes (`possibleAction`).
   */
  readonly deployTime?: Readonly<Record<string, string>>;
  /**
   * The deployed resource's attributes (`Fn::GetAtt` names, e.g. `NotificationQueueArn`, `Prefix`), when known:
   * effects then name the queue or prefix that goes away.
   */
  readonly attributes?: Readonly<Record<string, string>>;
  /**
   * The record's status as the service shows it now (`dpi plan`'s live reads; `gone` when the account's listing does not
   * show it), when it was read. The handler's Update compares the declared status with the live one (a subscription
   * paused in the web UI is re-activated by any Update), and makes a new record in place of one that is gone or
   * `invalid`. CloudFormation sends an Update only when the properties differ: with equal properties the live status
   * changes nothing. Undefined: the plan assumes the record is live and as last deployed.
   */
  readonly liveStatus?: string;
  /**
   * CloudFormation's `DeletionPolicy` of the deployed resource: with `Retain` (or `RetainExceptOnCreate`)
   * CloudFormation sends no Delete when the resource leaves the stack, so the record is kept.
   */
  readonly deletionPolicy?: string;
  /**
   * CloudFormation's `UpdateReplacePolicy` that applies when the resource is replaced: with `Retain` (or
   * `RetainExceptOnCreate`) the replaced record is not cleaned up.
   */
  readonly updateReplacePolicy?: string;
  /**
   * What the service shows of the record a Create adopts (`AdoptId`), when the caller read it: the plan then says
   * whether the adoption changes anything, as the handler will decide it. Undefined: not read (the plan words the
   * changes as conditional on what the deploy's reads show).
   */
  readonly adoption?: PlanAdoptionHint;
}

/** What the reads show of a record to adopt (see `PlanInput.adoption`). */
export interface PlanAdoptionHint {
  /** The subscription read (`GET /v2/sub/{id}`); undefined: it answered 404. */
  readonly subscription?: {
    readonly status: string;
    readonly product?: unknown;
    readonly remote_identity?: unknown;
    readonly name?: unknown;
    readonly storage_group?: unknown;
    readonly date_start?: unknown;
  };
  /** Its stored parameters (the vendor's parameter read); undefined: not shown. */
  readonly stored?: Readonly<Record<string, string>>;
  /** Other live subscriptions of the same product and remote identity, when a listing showed them. */
  readonly siblings?: readonly string[];
}

/** What the lifecycle journal records of a deployed resource (see `PlanInput.journal`). */
export interface PlanJournalHint {
  /** The record existed before the stack (adopted): never ended unless destroy is declared next to its adoption. */
  readonly adopted?: boolean;
  /** The removal policy the journal recorded. */
  readonly removalPolicy?: 'retain' | 'destroy';
  /**
   * A subscription's stored product parameters before the last deployed change (the journal's `previous`): a
   * declaration that drops one the last change added (a revert) keeps it instead of failing.
   */
  readonly previousParameters?: Readonly<Record<string, string>>;
  /** Stored parameters the journal records as kept by the service after an earlier revert. */
  readonly keptParameters?: Readonly<Record<string, string>>;
}
