import { Annotations, CfnOutput, CfnResource, CustomResource, NestedStack, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { addFleetAlarms, NotificationPipelineFleetAlarmOptions } from './fleet-alarms';
import { fleetBucketOf } from './fleet-hash';
import { pipelinesPerWave, planWaves } from './fleet-waves';
import { INotificationPipelineRoles } from './notification-pipeline-roles';
import { PartialFailure } from './notification-type';
import { stackResourceLimit } from './resource-limit';
import { useParentProvider } from '../connection/provider';
import { IServiceConnection } from '../connection/service-connection-ref';
import { invalid } from '../connection/validation';
import { NotificationPipeline, NotificationPipelineOptions } from '../kinds/notification-pipeline/construct';

/**
 * One remote identity of a `NotificationPipelineFleet`: its notification pipeline's settings (those of a
 * `NotificationPipeline`, see `NotificationPipelineOptions`). Optional settings left out take the fleet's defaults.
 */
export interface NotificationPipelineFleetIdentity extends NotificationPipelineOptions {
}

/** Properties of a `NotificationPipelineFleet`. */
export interface NotificationPipelineFleetProps {
  /** Connection to the service (shared by every pipeline of the fleet). */
  readonly connection: IServiceConnection;

  /** The customer-side roles (`NotificationPipelineRoles` or `NotificationPipelineRoles.fromRoleArns()`), shared. */
  readonly roles: INotificationPipelineRoles;

  /** The remote identities: one notification pipeline each (remote identity IDs unique in the app). */
  readonly identities: NotificationPipelineFleetIdentity[];

  /**
   * The number of nested stacks the pipelines are spread over (each identity goes to one of them by a jump
   * consistent hash of its remote identity ID). Nested stacks that get no identity are not created.
   *
   * Keep it fixed: the assignment depends only on the identity ID and this number, so adding or removing an
   * identity changes exactly one nested stack. Changing it moves about `1 - old/new` of the identities (raising
   * it from n to m moves only identities into the new nested stacks). A moved pipeline would be a new resource
   * while the old one still exists, which the handler refuses (one pipeline per identity): change it in two
   * deploys, first without the identities that move (`fleet.identitiesMovedBy(newCount)` lists them), then with the
   * new count and all identities.
   *
   * Each pipeline costs one resource in its nested stack (`addAlarms()` adds up to three more); CloudFormation
   * allows 500 per stack. The default holds about 4,000 pipelines without alarms with room to spare (on average
   * 250 per nested stack); a nested stack that would pass the limit is a synth error naming it.
   *
   * @default 16
   */
  readonly nestedStackCount?: number;

  /**
   * Default deployment region of the pipelines.
   *
   * @default - the stack's region (required when the stack is environment-agnostic)
   */
  readonly deploymentRegion?: string;

  /**
   * Default destination (storage group) ID of the pipelines.
   *
   * @default - none
   */
  readonly storageGroupId?: number;

  /**
   * Default of what to do when some types fail to subscribe.
   *
   * @default PartialFailure.FAIL
   */
  readonly partialFailure?: PartialFailure;

  /**
   * Default removal policy of the pipelines (`RETAIN` or `DESTROY`).
   *
   * `DESTROY` deletes a pipeline that leaves the app (or when the stack is deleted). `RETAIN` keeps it running and
   * releases it: CloudFormation shows the resource deleted, the lifecycle journal marks the record `released`, another
   * stack may adopt it and `dpi orphans` never lists it (see `NotificationPipelineProps.removalPolicy`). It applies
   * to the pipelines the fleet creates, so the default is `DESTROY`; an adopted identity (`existingSubscriptionId`)
   * is `RETAIN` unless its own `removalPolicy` says `DESTROY`.
   *
   * @default RemovalPolicy.DESTROY
   */
  readonly removalPolicy?: RemovalPolicy;
}

/** Default of `NotificationPipelineFleetProps.nestedStackCount`. */
const DEFAULT_NESTED_STACK_COUNT = 16;
/** A generous bound on the nested stacks of one fleet (each is one resource of the parent stack). */
const MAX_NESTED_STACK_COUNT = 200;
/** CloudFormation's limit on the outputs of one template. */
const MAX_OUTPUTS = 200;

/**
 * Notification pipelines (product 107) for many remote identities, spread over nested stacks below
 * CloudFormation's limit of 500 resources per stack.
 *
 * A single stack holds a few hundred `NotificationPipeline`s; a fleet holds thousands. Every pipeline goes to one
 * of `nestedStackCount` nested stacks chosen by a consistent hash of its remote identity ID, and its construct
 * ID (so its logical ID) is derived from that ID, never from its position in the list: adding or removing an
 * identity changes exactly one nested stack's template (`cdk diff` shows only that one), and the order of
 * `identities` does not matter.
 *
 * The nested stacks share the parent stack's connection, roles and provider: the provider's service token is
 * passed to them as a parameter, so the whole fleet has the two Lambda functions of one provider. Each pipeline
 * has an explicit lifecycle journal key `<parent stack name>/<nested stack path>/<identity>`, which stays the same
 * across deploys whatever name CloudFormation generates for its nested stack.
 *
 * @example
 * declare const connection: ServiceConnection;
 * declare const roles: NotificationPipelineRoles;
 *
 * const fleet = new NotificationPipelineFleet(this, 'Sellers', {
 *   connection,
 *   roles,
 *   identities: [
 *     { remoteIdentityId: 362, accountType: AccountType.SELLER, notificationTypes: [NotificationType.ORDER_CHANGE] },
 *     { remoteIdentityId: 363, accountType: AccountType.SELLER, notificationTypes: [NotificationType.ORDER_CHANGE], name: 'EU seller' },
 *     { remoteIdentityId: 401, accountType: AccountType.VENDOR, notificationTypes: [NotificationType.REPORT_PROCESSING_FINISHED] },
 *   ],
 *   deploymentRegion: 'us-east-1',
 * });
 * const seller = fleet.pipelineFor(362);
 */
export class NotificationPipelineFleet extends Construct {
  /** The number of nested stacks the identities are spread over (those with no identity are not created). */
  public readonly nestedStackCount: number;

  /**
   * The waves the fleet deploys in: the nested stacks of each wave wait for those of the wave before (a destroy runs
   * them in reverse), so that each wave's pipeline Creates make their calls within one handler invocation at the
   * service's rate limit (`ProviderOptions.rateLimitRequests` per `rateLimitWindow`, the handler's `timeout`). 1 for a
   * fleet that fits one wave (no dependency between its nested stacks), and without a shared budget
   * (`rateLimitRequests: 0`).
   */
  public readonly deployWaves: number;

  private readonly byIdentity = new Map<number, NotificationPipeline>();
  private readonly stacks = new Map<number, NestedStack>();

  constructor(scope: Construct, id: string, props: NotificationPipelineFleetProps) {
    super(scope, id);

    const parent = Stack.of(this);
    const count = props.nestedStackCount ?? DEFAULT_NESTED_STACK_COUNT;
    if (Token.isUnresolved(count) || !Number.isInteger(count) || count < 1 || count > MAX_NESTED_STACK_COUNT) {
      throw invalid(this, 'nestedStackCount', count, 'is not accepted', `use an integer from 1 to ${MAX_NESTED_STACK_COUNT} (default ${DEFAULT_NESTED_STACK_COUNT})`);
    }
    this.nestedStackCount = count;
    if (!Array.isArray(props.identities) || props.identities.length === 0) {
      throw invalid(this, 'identities', '', 'is empty', 'list at least one remote identity');
    }

    const accepted = (policy: RemovalPolicy | undefined): boolean =>
      policy === undefined || policy === RemovalPolicy.RETAIN || policy === RemovalPolicy.DESTROY;
    const fixPolicy = 'use RemovalPolicy.RETAIN (the pipeline is kept and released) or RemovalPolicy.DESTROY (it is deleted)';
    if (!accepted(props.removalPolicy)) throw invalid(this, 'removalPolicy', props.removalPolicy, 'is not accepted', fixPolicy);

    // Validate the IDs before anything is created: positive integers, each once.
    const firstIndex = new Map<number, number>();
    const firstAdopt = new Map<number, number>();
    props.identities.forEach((identity, i) => {
      if (!accepted(identity?.removalPolicy)) {
        throw invalid(this, `identities[${i}].removalPolicy`, identity.removalPolicy, 'is not accepted', fixPolicy);
      }
      const rid = identity?.remoteIdentityId;
      if (typeof rid !== 'number' || Token.isUnresolved(rid) || !Number.isInteger(rid) || rid < 1) {
        throw invalid(this, `identities[${i}].remoteIdentityId`, rid, 'is not a positive integer ID',
          'use the numeric remote identity ID shown by the service (a fleet needs literal IDs: they choose the nested stack)');
      }
      const first = firstIndex.get(rid);
      if (first !== undefined) {
        throw invalid(this, 'identities', rid, `lists remote identity ${rid} twice (identities[${first}]${describe(props.identities[first])} and `
          + `identities[${i}]${describe(identity)})`, 'list each remote identity once, with every notification type it needs');
      }
      firstIndex.set(rid, i);
      const adopt = identity.existingSubscriptionId;
      if (adopt !== undefined) {
        if (typeof adopt !== 'number' || Token.isUnresolved(adopt) || !Number.isSafeInteger(adopt) || adopt < 1) {
          throw invalid(this, `identities[${i}].existingSubscriptionId`, adopt, `(remote identity ${rid}) is not a positive integer subscription ID`,
            'use the numeric ID of the existing product-107 subscription of the pipeline (see `dpi import --pipeline-roles` or `dpi status`)');
        }
        const other = firstAdopt.get(adopt);
        if (other !== undefined) {
          throw invalid(this, `identities[${i}].existingSubscriptionId`, adopt, `(remote identity ${rid}) is also the existingSubscriptionId of `
            + `identities[${other}] (remote identity ${props.identities[other].remoteIdentityId})`, 'adopt each existing pipeline once, with its own remote identity');
        }
        firstAdopt.set(adopt, i);
      }
    });

    // Sorted by ID: the templates do not depend on the order of the list.
    const sorted = [...props.identities].sort((a, b) => a.remoteIdentityId - b.remoteIdentityId);
    for (const identity of sorted) {
      const bucket = fleetBucketOf(identity.remoteIdentityId, count);
      const nested = this.nestedStack(bucket);
      const pipeline = new NotificationPipeline(nested, `Identity${identity.remoteIdentityId}`, {
        connection: props.connection,
        roles: props.roles,
        remoteIdentityId: identity.remoteIdentityId,
        accountType: identity.accountType,
        notificationTypes: identity.notificationTypes,
        name: identity.name,
        storageGroupId: identity.storageGroupId ?? props.storageGroupId,
        deploymentRegion: identity.deploymentRegion ?? props.deploymentRegion,
        partialFailure: identity.partialFailure ?? props.partialFailure,
        // An adopted pipeline existed before the fleet: RETAIN unless its own removalPolicy says otherwise.
        removalPolicy: identity.removalPolicy ?? (identity.existingSubscriptionId !== undefined ? RemovalPolicy.RETAIN : props.removalPolicy),
        existingSubscriptionId: identity.existingSubscriptionId,
        rebuildOnAdoption: identity.rebuildOnAdoption,
      });
      // The journal key must not depend on the name CloudFormation generates for the nested stack.
      const resource = pipeline.node.findChild('Resource') as CustomResource;
      const cfn = resource.node.defaultChild as CfnResource;
      cfn.addPropertyOverride('JournalKey', `${parent.stackName}/${nested.node.path.slice(parent.node.path.length + 1)}/${pipeline.node.id}`);
      this.byIdentity.set(identity.remoteIdentityId, pipeline);
    }
    this.deployWaves = this.chainWaves(props.connection);
  }

  private chainWaves(connection: IServiceConnection): number {
    const perWave = pipelinesPerWave(connection.providerOptions);
    if (perWave === undefined) return 1;
    const counts = new Map([...this.stacks.keys()].map((index) => [index, 0]));
    for (const id of this.byIdentity.keys()) {
      const index = fleetBucketOf(id, this.nestedStackCount);
      counts.set(index, (counts.get(index) ?? 0) + 1);
    }
    const { waves, tooLarge } = planWaves(counts, perWave);
    if (tooLarge.length > 0) {
      const [index] = tooLarge;
      throw invalid(this, 'nestedStackCount', this.nestedStackCount, `puts ${counts.get(index)} pipelines in nested stack ${index}, more than one `
        + `deploy wave holds (${perWave}: the service calls that fit one handler invocation at the provider's rate limit)`,
      'raise nestedStackCount so that each nested stack holds fewer pipelines, or raise the provider\'s timeout or rateLimitRequests if your '
        + 'service account allows more');
    }
    for (let w = 1; w < waves.length; w++) {
      for (const index of waves[w]) {
        const resource = this.stacks.get(index)!.nestedStackResource!;
        for (const before of waves[w - 1]) resource.node.addDependency(this.stacks.get(before)!.nestedStackResource!);
      }
    }
    if (waves.length > 1) {
      Annotations.of(this).addInfo(`${this.byIdentity.size} pipelines deploy in ${waves.length} waves of at most ${perWave} (nested stacks `
        + `${waves.map((w) => w.join('+')).join(', then ')}): at the provider's rate limit a wave's calls fit one handler invocation`);
    }
    return waves.length;
  }

  /** The pipelines, by ascending remote identity ID. */
  public get pipelines(): NotificationPipeline[] {
    return [...this.byIdentity.keys()].sort((a, b) => a - b).map((k) => this.byIdentity.get(k)!);
  }

  /** The nested stacks that hold pipelines, by ascending index. */
  public get nestedStacks(): NestedStack[] {
    return [...this.stacks.keys()].sort((a, b) => a - b).map((k) => this.stacks.get(k)!);
  }

  /** The pipeline of a remote identity of the fleet; a synth error for an identity the fleet does not have. */
  public pipelineFor(remoteIdentityId: number): NotificationPipeline {
    const p = this.byIdentity.get(remoteIdentityId);
    if (!p) {
      throw invalid(this, 'remoteIdentityId', remoteIdentityId, 'is not an identity of this fleet', 'add it to identities, or use an identity of the fleet');
    }
    return p;
  }

  /**
   * The remote identities of the fleet that a change of `nestedStackCount` to `nestedStackCount` would move to another
   * nested stack (ascending): deploy once without them before changing the count (see `nestedStackCount`).
   */
  public identitiesMovedBy(nestedStackCount: number): number[] {
    const n = nestedStackCount;
    if (Token.isUnresolved(n) || !Number.isInteger(n) || n < 1 || n > MAX_NESTED_STACK_COUNT) {
      throw invalid(this, 'identitiesMovedBy', nestedStackCount, 'is not a nested stack count', `use an integer from 1 to ${MAX_NESTED_STACK_COUNT}`);
    }
    return [...this.byIdentity.keys()].sort((a, b) => a - b)
      .filter((id) => fleetBucketOf(id, nestedStackCount) !== fleetBucketOf(id, this.nestedStackCount));
  }

  /**
   * Alarms for the whole fleet, as many whatever the number of identities: one per signal that
   * `NotificationPipeline.addAlarms()` watches (oldest queue message; with a queue notification type, deliveries to
   * the bucket failing and late), each on a Metrics Insights query that aggregates the metric over every queue (or
   * delivery stream) of the account in the stack's region. They live in the fleet's stack (the parent of the nested
   * stacks); the pipelines must all be deployed in that stack's region. With `perIdentity: true` every pipeline also
   * gets its own alarms (in its nested stack). Call once. Returns the created alarms (fleet alarms first).
   */
  public addAlarms(options: NotificationPipelineFleetAlarmOptions = {}): cloudwatch.Alarm[] {
    return addFleetAlarms(this, this.pipelines, options);
  }

  private nestedStack(bucket: number): NestedStack {
    let nested = this.stacks.get(bucket);
    if (nested) return nested;
    const id = `Pipelines${String(bucket).padStart(String(this.nestedStackCount - 1).length, '0')}`;
    nested = new NestedStack(this, id, {
      description: `Notification pipelines of ${this.node.path} (nested stack ${bucket} of ${this.nestedStackCount})`,
    });
    useParentProvider(nested);
    const n = nested;
    n.node.addValidation({
      validate: () => {
        const errors: string[] = [];
        const inStack = n.node.findAll().filter((c) => Stack.of(c) === n);
        const pipelines = [...this.byIdentity.values()].filter((p) => Stack.of(p) === n).length;
        const fix = `raise nestedStackCount (now ${this.nestedStackCount}; this moves some pipelines to new nested stacks) or split the `
          + 'identities over two fleets';
        const limit = stackResourceLimit(n);
        const resources = inStack.filter((c) => CfnResource.isCfnResource(c)).length;
        if (limit > 0 && resources > limit) {
          errors.push(`${n.node.path}: nested stack ${bucket} of the fleet has ${resources} resources (${pipelines} pipelines), more than `
            + `CloudFormation's limit of ${limit}; ${fix}`);
        }
        // References from the parent to a pipeline's attributes (e.g. addConsumer() with a function of the parent) are
        // outputs of its nested stack: CloudFormation allows 200 per template.
        const outputs = inStack.filter((c) => c instanceof CfnOutput).length;
        if (outputs > MAX_OUTPUTS) {
          errors.push(`${n.node.path}: nested stack ${bucket} of the fleet has ${outputs} outputs (${pipelines} pipelines), more than `
            + `CloudFormation's limit of ${MAX_OUTPUTS}: each pipeline attribute used outside the nested stack is one; use fewer attributes `
            + `across the boundary (e.g. declare consumers in the pipeline's own stack, Stack.of(pipeline)), or ${fix}`);
        }
        return errors;
      },
    });
    this.stacks.set(bucket, nested);
    return nested;
  }
}

function describe(identity: NotificationPipelineFleetIdentity | undefined): string {
  return identity?.name !== undefined ? ` '${identity.name}'` : '';
}
