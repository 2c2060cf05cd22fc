import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { IConstruct } from 'constructs';
import { ILifecycleJournal } from './lifecycle-journal';
import { ConnectionBinding } from './provider';
import { ProviderOptions } from './provider-options';
import { ConnectionProperties } from '../contract';

/**
 * A connection to the Data Pipeline Integration Service, as the resource and monitoring constructs use it: every
 * `connection` prop takes this interface.
 *
 * `ServiceConnection` is the implementation: pass one from this stack or from another stack of the app (the
 * resource's stack gets its own provider, which references the connection's secret and journal, as aws-cdk-lib's
 * cross-stack references do). There is no `fromConnectionAttributes()`: a connection deploys nothing of its own
 * that another app could import (the provider is made per stack, by the stack's first resource or connection), so
 * in another app declare a `ServiceConnection` with the same endpoints, the secret imported by name or ARN and the
 * journal by `LifecycleJournal.fromTableName()` (docs/constructs.md, "One connection, several stacks").
 *
 * Implemented by `ServiceConnection` only: the members the constructs bind through are internal.
 */
export interface IServiceConnection extends IConstruct {
  /** Base address of the service gateway. */
  readonly baseUrl: string;
  /** Base address of the subscriptions service. */
  readonly subscriptionsUrl: string;
  /** Base address of the account service. */
  readonly accountUrl: string;
  /** Base address of the user service. */
  readonly userUrl: string;
  /** Base address of the remote identity service. */
  readonly remoteIdentityUrl: string;
  /** Base address of the authentication service. */
  readonly authUrl: string;
  /** The refresh token secret (only its ARN reaches a template). */
  readonly refreshToken: secretsmanager.ISecret;
  /** The account ID, when given. */
  readonly accountId?: number;
  /** The user ID, when given. */
  readonly userId?: number;
  /** Name of the lifecycle journal's DynamoDB table. */
  readonly journalTableName: string;
  /** The declared lifecycle journal (`journal`), when given. */
  readonly journal?: ILifecycleJournal;
  /** The lifecycle journal table you supplied (`journalTable`, or the table of `journal`), when given. */
  readonly journalTable?: dynamodb.ITable;
  /** The provider options given to this connection (`provider`), when given. */
  readonly providerOptions?: ProviderOptions;

  /**
   * Bind a resource: the provider of the resource's stack (granted the secret and the journal) and its service token.
   *
   * @internal
   */
  _bind(resource: IConstruct, options?: { readonly wait?: boolean }): ConnectionBinding;

  /**
   * The `Connection` custom resource property (secret ARN, never its value).
   *
   * @internal
   */
  _connectionProperties(): ConnectionProperties;
}
