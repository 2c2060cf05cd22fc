import { Annotations, Stack, Token } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct, IConstruct } from 'constructs';
import { ILifecycleJournal } from './lifecycle-journal';
import { ConnectionBinding, DpiProvider } from './provider';
import { ProviderOptions, validateProviderOptions } from './provider-options';
import { IServiceConnection } from './service-connection-ref';
import { resolveEndpoints, ServiceEndpoints } from './service-endpoints';
import { invalid, numStr, requirePositiveInteger } from './validation';
import { ConnectionProperties, DEFAULT_JOURNAL_TABLE } from '../contract';

export type { ProviderOptions } from './provider-options';

/**
 * Keys under which a notification pipeline's result is stored in its product-107 subscription, for the parts
 * that product 107's record (`required_meta_fields`) names no key for.
 */
export interface PipelineMetadataKeys {
  /**
   * `product_parameters` key of the upstream-subscriptions map (JSON: notification type -> upstream ID).
   *
   * @default 'subscriptions'
   */
  readonly subscriptions?: string;

  /**
   * `product_parameters` key of the full pipeline `meta` (JSON).
   *
   * @default 'meta'
   */
  readonly meta?: string;
}

/**
 * Properties of a `ServiceConnection`.
 *
 * The service has separate hosts for the gateway, subscriptions, account, user, remote identities and
 * authentication: give them as `endpoints` (`ServiceEndpoints.of({...})`, or `ServiceEndpoints.singleOrigin(url)`
 * when one origin serves everything: the emulator, a proxy).
 */
export interface ServiceConnectionProps {
  /**
   * Where the service is: `ServiceEndpoints.of({ baseUrl, subscriptionsUrl, accountUrl, userUrl, remoteIdentityUrl,
   * authUrl })`, or `ServiceEndpoints.singleOrigin(url)` for one origin. Checked at synth (https, or http on a
   * loopback host; no credentials).
   *
   * @default - required, unless the deprecated URL properties are given
   */
  readonly endpoints?: ServiceEndpoints;

  /**
   * One origin that serves every part of the service (the local emulator, or a proxy in front of the service):
   * sets all six URLs. When given, none of the six URL properties may be given.
   *
   * @default - none
   * @deprecated use `endpoints: ServiceEndpoints.singleOrigin(url)`
   */
  readonly singleOriginUrl?: string;

  /**
   * Base address of the service gateway (paths beginning `/service/...`).
   *
   * Must be an `https://` URL; `http://` is accepted only for a loopback host
   * (`localhost`, `127.0.0.1`, `::1`), e.g. the local emulator.
   *
   * @default - none
   * @deprecated use `endpoints: ServiceEndpoints.of({ baseUrl, ... })`
   */
  readonly baseUrl?: string;

  /**
   * Base address of the subscriptions service (`/v2/sub`, `/v2/product`, `/storages`).
   *
   * @default - none
   * @deprecated use `endpoints: ServiceEndpoints.of({ subscriptionsUrl, ... })`
   */
  readonly subscriptionsUrl?: string;

  /**
   * Base address of the account service (`/account`).
   *
   * @default - none
   * @deprecated use `endpoints: ServiceEndpoints.of({ accountUrl, ... })`
   */
  readonly accountUrl?: string;

  /**
   * Base address of the user service (`/user`).
   *
   * @default - none
   * @deprecated use `endpoints: ServiceEndpoints.of({ userUrl, ... })`
   */
  readonly userUrl?: string;

  /**
   * Base address of the remote identity service (`/sri`, `/ri`).
   *
   * @default - none
   * @deprecated use `endpoints: ServiceEndpoints.of({ remoteIdentityUrl, ... })`
   */
  readonly remoteIdentityUrl?: string;

  /**
   * Base address of the authentication service (refresh token exchange).
   *
   * @default - none
   * @deprecated use `endpoints: ServiceEndpoints.of({ authUrl, ... })`
   */
  readonly authUrl?: string;

  /**
   * Secrets Manager secret whose value is the refresh token.
   *
   * Only the secret's ARN is written to the template; the handler Lambda
   * reads the value at deploy time.
   */
  readonly refreshToken: secretsmanager.ISecret;

  /**
   * The service account ID (the `account` of subscriptions).
   *
   * @default - looked up through the account service at deploy time
   */
  readonly accountId?: number;

  /**
   * The service user ID (the `user` of subscriptions).
   *
   * @default - looked up through the user service at deploy time
   */
  readonly userId?: number;

  /**
   * Asks the provider's handler to create the lifecycle journal's DynamoDB table, by this name, in the deploying
   * account and region at run time (outside every template: cdk-nag, tags and policies never see it). Prefer
   * `journal` (a declared `LifecycleJournal`); this is for apps that keep the table earlier versions of the library
   * created by default (`'dpi-lifecycle-journal'`).
   *
   * The provider's handler writes its intent before every changing call and the outcome after it, so that a
   * retry, a rollback and a redeploy find what an earlier attempt made. The table is shared by every stack of
   * the account and region, created by the handler on first use (pay-per-request, point-in-time recovery,
   * deletion protection) and kept when stacks are deleted, so records that a failed or deleted stack left
   * stay findable. The provider role may use only this table. The handler creates no table it was not asked to
   * create. Exactly one of `journal`, `journalTable` and `journalTableName` is required.
   *
   * @default - none: give `journal`, `journalTable` or this
   */
  readonly journalTableName?: string;

  /**
   * A lifecycle journal table you manage (e.g. a `dynamodb.TableV2` in this or another stack, or an imported table),
   * instead of the one the handler creates by name. The handler then never creates a table: it is granted read and
   * write on this table's items (and `DescribeTable`) only, and checks at first use that the table exists and has
   * the journal's key schema, failing with a reason that names the table otherwise.
   *
   * Required key schema: partition key `pk` (String) and sort key `sk` (String), no other key; items are small (a
   * resource's record, a claim, a lock). Billing: on-demand (`PAY_PER_REQUEST`) fits the bursty deploy-time load;
   * with provisioned capacity, throttling fails deployments. Keep point-in-time recovery and deletion protection on
   * and a `RETAIN` removal policy: the records must outlive the stacks whose service records they prove. Use one
   * table for all stacks of the account and region (as the default does), so that a stack finds what another
   * stack's resources claimed. Not with `journalTableName`.
   *
   * @default - none: give `journal`, `journalTable` or `journalTableName`
   */
  readonly journalTable?: dynamodb.ITable;

  /**
   * The lifecycle journal, declared (`LifecycleJournal`, or `LifecycleJournal.fromTableName` in other apps): the handler
   * never creates a table; before its first use it checks the table's key schema, its journal tag, its deletion
   * protection and the resource policy that lets only the providers' roles (and the journal's maintainers) write items.
   * The provider's role is placed under the journal's writers' IAM path. Not with `journalTable` or `journalTableName`.
   * Declare it once per account and region, in a stack of its own: `cdk deploy --all` (or `cdk deploy <your stack>`,
   * which deploys the journal's stack first) stays one command.
   *
   * @default - none: give `journal`, `journalTable` or `journalTableName`
   */
  readonly journal?: ILifecycleJournal;

  /**
   * Options of the stack's single custom resource provider (VPC, role, permissions boundary, log group, memory,
   * timeout). One provider serves every resource of a stack, made by the stack's first `ServiceConnection`: give
   * the options on that first connection (later ones may omit them), or the same objects on each; other options on a
   * later connection of the same stack are a synth error naming both values.
   *
   * @default - the provider as described in docs/constructs.md ("How it deploys")
   */
  readonly provider?: ProviderOptions;

  /**
   * Where a notification pipeline's result parts are stored when product 107's record names no key for them.
   *
   * @default - `subscriptions` and `meta`
   */
  readonly pipelineMetadataKeys?: PipelineMetadataKeys;
}

/**
 * Connection settings of the Data Pipeline Integration Service: endpoints and
 * the refresh token secret.
 *
 * Every resource construct (pipelines, subscriptions, history requests, order
 * jobs) and monitor takes a connection (`IServiceConnection`: this one, from this
 * stack or another stack of the app). All resources of a stack are served by one
 * provider Lambda (plus the custom resource framework Lambda), whatever their
 * number; the connection grants that Lambda read access to its secret.
 *
 * @example
 * const connection = new ServiceConnection(this, 'Dpi', {
 *   endpoints: ServiceEndpoints.of({
 *     baseUrl: 'https://api.example-dpi.com',
 *     subscriptionsUrl: 'https://subscriptions.example-dpi.com',
 *     accountUrl: 'https://account.example-dpi.com',
 *     userUrl: 'https://user.example-dpi.com',
 *     remoteIdentityUrl: 'https://remote-identity.example-dpi.com',
 *     authUrl: 'https://authentication.example-dpi.com',
 *   }),
 *   refreshToken: secretsmanager.Secret.fromSecretNameV2(this, 'Token', 'dpi/refresh-token'),
 * });
 */
export class ServiceConnection extends Construct implements IServiceConnection {
  /** Base address of the service gateway. */
  public readonly baseUrl: string;
  /** Base address of the subscriptions service. */
  public readonly subscriptionsUrl: string;
  /** Base address of the account service. */
  public readonly accountUrl: string;
  /** Base address of the user service. */
  public readonly userUrl: string;
  /** Base address of the remote identity service. */
  public readonly remoteIdentityUrl: string;
  /** Base address of the authentication service. */
  public readonly authUrl: string;
  /** The refresh token secret. */
  public readonly refreshToken: secretsmanager.ISecret;
  /** The account ID, when given. */
  public readonly accountId?: number;
  /** The user ID, when given. */
  public readonly userId?: number;
  /** Name of the lifecycle journal's DynamoDB table. */
  public readonly journalTableName: string;
  /** The declared lifecycle journal (`journal`), when given. */
  public readonly journal?: ILifecycleJournal;
  /** The lifecycle journal table you supplied (`journalTable`, or the table of `journal`), when given. */
  public readonly journalTable?: dynamodb.ITable;
  /** The provider options given to this connection (`provider`), when given. */
  public readonly providerOptions?: ProviderOptions;

  private readonly metadataKeys?: PipelineMetadataKeys;
  /** The providers `_bind` has granted the secret and the journal to. */
  private readonly grantedProviders = new WeakSet<DpiProvider>();

  constructor(scope: Construct, id: string, props: ServiceConnectionProps) {
    super(scope, id);

    if (props.refreshToken === undefined || props.refreshToken === null) {
      throw invalid(this, 'refreshToken', props.refreshToken, 'is missing', 'pass a secretsmanager.ISecret holding the refresh token');
    }
    const endpoints = resolveEndpoints(this, props);
    this.baseUrl = endpoints.baseUrl;
    this.subscriptionsUrl = endpoints.subscriptionsUrl;
    this.accountUrl = endpoints.accountUrl;
    this.userUrl = endpoints.userUrl;
    this.remoteIdentityUrl = endpoints.remoteIdentityUrl;
    this.authUrl = endpoints.authUrl;
    this.refreshToken = props.refreshToken;
    this.accountId = props.accountId;
    this.userId = props.userId;
    requirePositiveInteger(this, 'accountId', props.accountId);
    requirePositiveInteger(this, 'userId', props.userId);

    if (props.journal && (props.journalTable || props.journalTableName !== undefined)) {
      const other = props.journalTable ? 'journalTable' : 'journalTableName';
      throw invalid(this, other, props.journalTable?.node.path ?? props.journalTableName, `cannot be combined with journal (${props.journal.node.path})`,
        'give journal alone: it names the table');
    }
    if (!props.journal && !props.journalTable && props.journalTableName === undefined) {
      throw new Error(`${this.node.path}: no lifecycle journal (journal, journalTable or journalTableName): the journal is the only proof of `
        + 'what this connection\'s resources made, and the handler creates no table it was not asked to; declare one (journal: new LifecycleJournal(journalStack, \'Journal\'), in a stack of its own, or LifecycleJournal.fromTableName in other '
        + 'apps), give a table you manage (journalTable), or ask the handler to create one at run time (journalTableName: '
        + `'${DEFAULT_JOURNAL_TABLE}', the table earlier versions created by default)`);
    }
    const journal = props.journal;
    this.journal = journal;
    if (journal) checkJournalPlace(this, journal);
    if (props.journalTable && props.journalTableName !== undefined) {
      throw invalid(this, 'journalTableName', props.journalTableName, `cannot be combined with journalTable (${props.journalTable.node.path})`,
        'give journalTable for a table you manage, or journalTableName for one the handler creates');
    }
    // A journal of another stack by name, never by a cross-stack reference (an export would pin the journal's stack).
    this.journalTable = journal
      ? (Stack.of(journal) === Stack.of(this) ? journal.table : dynamodb.Table.fromTableName(this, 'JournalTable', journal.tableName))
      : props.journalTable;
    if (this.journalTable?.node.defaultChild && Stack.of(this.journalTable) === Stack.of(this)) {
      Annotations.of(this).addWarningV2('data-pipeline-integration-cdk:journal-table-in-stack',
        `${journal ? 'journal' : 'journalTable'} (${this.journalTable.node.path}) is defined in the stack it serves: that stack's rollback or \`cdk destroy\` can delete `
        + 'the records its handler needs, and stacks with different journals cannot see each other\'s records; define the table once per '
        + 'account and region in a stack of its own and import it (docs/constructs.md, "A journal table you manage")');
    }
    this.journalTableName = journal?.tableName ?? props.journalTable?.tableName ?? props.journalTableName ?? DEFAULT_JOURNAL_TABLE;
    validateProviderOptions(this, props.provider);
    this.providerOptions = props.provider;
    if (!Token.isUnresolved(this.journalTableName) && !/^[A-Za-z0-9_.-]{3,255}$/.test(this.journalTableName)) {
      throw invalid(this, 'journalTableName', this.journalTableName, 'is not a DynamoDB table name',
        'use 3 to 255 letters, digits, underscores, hyphens and dots');
    }
    for (const part of ['subscriptions', 'meta'] as const) {
      const key = props.pipelineMetadataKeys?.[part];
      if (key !== undefined && !Token.isUnresolved(key) && !/^[A-Za-z0-9_.:-]{1,128}$/.test(key)) {
        throw invalid(this, `pipelineMetadataKeys.${part}`, key, 'is not a product parameter key',
          'use 1 to 128 letters, digits and _ . : - (no spaces)');
      }
    }
    if (props.pipelineMetadataKeys?.subscriptions !== undefined && props.pipelineMetadataKeys.subscriptions === props.pipelineMetadataKeys.meta) {
      throw invalid(this, 'pipelineMetadataKeys', props.pipelineMetadataKeys.meta, 'names the same key for subscriptions and meta',
        'use two different keys');
    }
    this.metadataKeys = props.pipelineMetadataKeys;

    // The provider of this stack can read the secret and use the journal even before a resource binds.
    const provider = DpiProvider.of(this, this.providerOptions, this);
    provider.grantSecretRead(this.refreshToken);
    this.grantJournalTo(provider);
    provider.bindConnection(this._connectionProperties());
  }

  /**
   * Bind a resource to this connection: obtain the provider of the resource's
   * stack (granting it read access to the refresh token secret) and return its
   * service token with the `Connection` property.
   *
   * @internal
   */
  public _bind(resource: IConstruct, options: { readonly wait?: boolean } = {}): ConnectionBinding {
    const provider = DpiProvider.of(resource, this.providerOptions, this);
    // The same grants for every resource of a stack: made once per provider (the provider's own check resolves tokens).
    if (!this.grantedProviders.has(provider)) {
      this.grantedProviders.add(provider);
      provider.grantSecretRead(this.refreshToken);
      this.grantJournalTo(provider);
      provider.bindConnection(this._connectionProperties());
    }
    provider.serveStack(Stack.of(resource));
    return {
      serviceToken: options.wait ? provider.waiterServiceToken() : provider.serviceToken,
      connection: this._connectionProperties(),
    };
  }

  /** The journal grants of a provider: the supplied table (items only), else the named table (created on first use). */
  private grantJournalTo(provider: DpiProvider): void {
    if (this.journal) provider.grantDeclaredJournal(this.journal, this);
    else if (this.journalTable) provider.grantProvidedJournal(this.journalTable, this);
    else provider.grantJournal(this.journalTableName, this);
  }

  /**
   * The `Connection` custom resource property (secret ARN, never its value).
   *
   * @internal
   */
  public _connectionProperties(): ConnectionProperties {
    return {
      BaseUrl: this.baseUrl,
      SubscriptionsUrl: this.subscriptionsUrl,
      AccountUrl: this.accountUrl,
      UserUrl: this.userUrl,
      RemoteIdentityUrl: this.remoteIdentityUrl,
      AuthUrl: this.authUrl,
      RefreshTokenSecretArn: this.refreshToken.secretArn,
      ...(this.accountId !== undefined ? { AccountId: numStr(this.accountId) } : {}),
      ...(this.userId !== undefined ? { UserId: numStr(this.userId) } : {}),
      JournalTableName: this.journalTableName,
      ...(this.metadataKeys?.subscriptions !== undefined ? { PipelineSubscriptionsKey: this.metadataKeys.subscriptions } : {}),
      ...(this.metadataKeys?.meta !== undefined ? { PipelineMetaKey: this.metadataKeys.meta } : {}),
    };
  }
}

/**
 * A declared journal must be in the connection's account and region (the handler reaches it by name there); a journal
 * of another top-level stack of the app is deployed first (a stack dependency, not a cross-stack reference).
 */
function checkJournalPlace(connection: ServiceConnection, journal: ILifecycleJournal): void {
  const here = Stack.of(connection);
  const there = Stack.of(journal);
  if (here === there) return;
  for (const part of ['account', 'region'] as const) {
    const [a, b] = [here[part], there[part]];
    if (!Token.isUnresolved(a) && !Token.isUnresolved(b) && a !== b) {
      throw invalid(connection, 'journal', journal.node.path, `is in ${part} ${b}, not in this stack's ${part} ${a}`,
        'declare one LifecycleJournal per account and region and give each connection the one of its own');
    }
  }
  // Nested: CloudFormation could run the resources before the table exists (no order between a nested stack and another tree).
  if (here.nested || there.nested) {
    throw invalid(connection, 'journal', journal.node.path, `is in stack ${there.node.path}, and ${here.nested ? 'this connection\'s' : 'the journal\'s'} stack is nested`,
      'declare the LifecycleJournal in a top-level stack of its own (or in the connection\'s own stack)');
  }
  here.node.addDependency(there);
}
