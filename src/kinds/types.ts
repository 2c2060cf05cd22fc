/**
 * The shape of a resource kind's definition: what the constructs write (the wire properties), what the handler
 * returns (the attributes), what the lifecycle journal records (the states and the document's tag) and how the
 * command line names it. Pure data: this layer imports nothing but the contract (it is bundled into the Lambda,
 * next to the constructs and the command line).
 */
import type { ConnectionProperties } from '../contract';

/** Properties every resource carries, whatever its kind. */
export interface WireBase {
  /** The provider's function (set by `CustomResource`). */
  readonly ServiceToken?: string;
  /** The connection (addresses, the refresh-token secret, the journal table). */
  readonly Connection: ConnectionProperties;
  /**
   * The journal key (`<stack>/<path>`) when `<stack name>/<logical ID>` is not stable (a fleet's nested pipelines,
   * set by a property override).
   */
  readonly JournalKey?: string;
}

/** Properties every kind has and no field spec names (read by the dispatcher and the journal, not by a handler). */
export type CommonWireKey = keyof WireBase;

/**
 * How the handler reads one wire property (CloudFormation delivers every scalar as a string):
 * `string` / `int` required (`?`: optional, absent or empty is undefined), `bool` (`true`/`false`, absent: false),
 * `list` (absent: []), `map` (a flat string map, absent: {}).
 */
export type FieldCode = 'string' | 'string?' | 'int' | 'int?' | 'bool' | 'list' | 'map';

/** The codes a property of wire type `V` may be read with (a required property may also be read leniently). */
type CodesFor<V, Optional extends boolean> =
  [NonNullable<V>] extends [readonly string[]] ? 'list'
    : [NonNullable<V>] extends [Record<string, string>] ? 'map'
      : Optional extends true ? 'string?' | 'int?' | 'bool' : 'string' | 'string?' | 'int' | 'int?' | 'bool';

/**
 * The field spec of a wire interface: one code per property (the common ones excepted). The compiler refuses a spec
 * that misses a property, names one the interface does not have, or reads an optional property as required.
 */
export type WireSpec<W> = {
  readonly [K in Exclude<keyof W, CommonWireKey>]-?: CodesFor<W[K], undefined extends W[K] ? true : false>;
};

/** The value the handler gets for a code. */
export type FieldValue<C> = C extends 'string' ? string
  : C extends 'string?' ? string | undefined
    : C extends 'int' ? number
      : C extends 'int?' ? number | undefined
        : C extends 'bool' ? boolean
          : C extends 'list' ? string[]
            : C extends 'map' ? Record<string, string> : never;

/** The typed, coerced properties read with a spec. */
export type Typed<S> = { -readonly [K in keyof S]: FieldValue<S[K]> };

/** States in which a record holds nothing of the stack's (any kind; the command line also writes them). */
export type ClosedState = 'deleted' | 'abandoned' | 'released';

/** The closed states (see `ClosedState`). */
export const CLOSED_STATES: readonly ClosedState[] = ['deleted', 'abandoned', 'released'];

/** The journal claim namespace of a service record (`claim#<claim>#<id>`). */
export type ClaimKind = 'sub' | 'history';

/** One resource kind. `T`: its resource type; `W`: its wire properties; `S`: its journal states. */
export interface KindDefinition<T extends string = string, W = unknown, S extends string = string> {
  /** The CloudFormation resource type (`Custom::Dpi…`), also the journal document's `kind` tag. */
  readonly type: T;
  /** Short name (the TYPE column of `dpi plan` / `dpi orphans`, the prefix of the handler's property errors). */
  readonly shortName: string;
  /** Human name of the kind. */
  readonly description: string;
  /** Human name of the service record a resource of the kind holds. */
  readonly record: string;
  /** How the handler reads each wire property. */
  readonly fields: WireSpec<W>;
  /** The `Fn::GetAtt` names (the handler's `Data`). */
  readonly attributes: readonly string[];
  /** Every journal state a record of the kind can be in. */
  readonly states: readonly S[];
  /**
   * The states of a create whose answer was lost (sent, its outcome not confirmed by the service). `dpi journal
   * resolve` settles a record in one of them, after the check that state has (`attemptChecks` of a kind's command-line
   * hooks, or the shared check of `recording`, the create of src/handler/creates.ts); test/kinds checks each has one.
   */
  readonly unconfirmedStates: readonly S[];
  /**
   * The states the handler's Delete leaves as they are when it cannot tell what the attempt made: `dpi orphans --fix`
   * leaves a record in one of them as it is (never marks it deleted).
   */
  readonly undecidedStates: readonly S[];
  /** Whether the Delete takes the `RemovalPolicy` property (`retain` releases the record). */
  readonly removalPolicy: boolean;
  /** The claim namespace of the record's service ID, when the journal claims it. */
  readonly claim?: ClaimKind;
  /** Whether every resource of the kind adopts an existing record (never creates one). */
  readonly alwaysAdopted: boolean;
  /** Whether the provider polls `isComplete` for the kind (the resource may wait for the service). */
  readonly polled: boolean;
  /** Whether the drift check reads the stored product parameters of the record. */
  readonly readsParameters: boolean;
  /** Order of `dpi orphans --fix` (lower first: what hangs off a subscription before the subscription). */
  readonly fixOrder: number;
}
