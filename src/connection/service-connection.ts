import { Token } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct, IConstruct } from 'constructs';
import { ConnectionBinding, DpiProvider } from './provider';
import { invalid, numStr, requirePositiveInteger } from './validation';
import { ConnectionProperties } from '../contract';

/**
 * Properties of a `ServiceConnection`.
 */
export interface ServiceConnectionProps {
  /**
   * Base address of the service gateway (paths beginning `/service/...`).
   *
   * Must be an `https://` URL; `http://` is accepted only for a loopback host
   * (`localhost`, `127.0.0.1`, `::1`), e.g. the local emulator.
   */
  readonly baseUrl: string;

  /**
   * Base address of the subscriptions service.
   *
   * @default - the baseUrl
   */
  readonly subscriptionsUrl?: string;

  /**
   * Base address of the account service.
   *
   * @default - the baseUrl
   */
  readonly accountUrl?: string;

  /**
   * Base address of the user service.
   *
   * @default - the baseUrl
   */
  readonly userUrl?: string;

  /**
   * Base address of the remote identity service.
   *
   * @default - the baseUrl
   */
  readonly remoteIdentityUrl?: string;

  /**
   * Base address of the authentication service (refresh token exchange).
   *
   * @default - the baseUrl
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
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * Connection settings of the Data Pipeline Integration Service: endpoints and
 * the refresh token secret.
 *
 * Every resource construct (pipelines, subscriptions, history requests, order
 * jobs) takes a connection. All resources of a stack are served by one
 * provider Lambda (plus the custom resource framework Lambda), whatever their
 * number; the connection grants that Lambda read access to its secret.
 *
 * @example
 * const connection = new ServiceConnection(this, 'Dpi', {
 *   baseUrl: 'https://api.example-dpi.com',
 *   refreshToken: secretsmanager.Secret.fromSecretNameV2(this, 'Token', 'dpi/refresh-token'),
 * });
 */
export class ServiceConnection extends Construct {
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

  constructor(scope: Construct, id: string, props: ServiceConnectionProps) {
    super(scope, id);

    this.baseUrl = props.baseUrl;
    this.subscriptionsUrl = props.subscriptionsUrl ?? props.baseUrl;
    this.accountUrl = props.accountUrl ?? props.baseUrl;
    this.userUrl = props.userUrl ?? props.baseUrl;
    this.remoteIdentityUrl = props.remoteIdentityUrl ?? props.baseUrl;
    this.authUrl = props.authUrl ?? props.baseUrl;
    this.refreshToken = props.refreshToken;
    this.accountId = props.accountId;
    this.userId = props.userId;

    if (props.refreshToken === undefined || props.refreshToken === null) {
      throw invalid(this, 'refreshToken', props.refreshToken, 'is missing', 'pass a secretsmanager.ISecret holding the refresh token');
    }
    const urls: Array<[string, string | undefined]> = [
      ['baseUrl', props.baseUrl],
      ['subscriptionsUrl', props.subscriptionsUrl],
      ['accountUrl', props.accountUrl],
      ['userUrl', props.userUrl],
      ['remoteIdentityUrl', props.remoteIdentityUrl],
      ['authUrl', props.authUrl],
    ];
    for (const [name, value] of urls) {
      if (value !== undefined || name === 'baseUrl') {
        validateUrl(this, name, value);
      }
    }
    requirePositiveInteger(this, 'accountId', props.accountId);
    requirePositiveInteger(this, 'userId', props.userId);

    // The provider of this stack can read the secret even before a resource binds.
    DpiProvider.of(this).grantSecretRead(this.refreshToken);
  }

  /**
   * Bind a resource to this connection: obtain the provider of the resource's
   * stack (granting it read access to the refresh token secret) and return its
   * service token with the `Connection` property.
   *
   * @internal
   */
  public _bind(resource: IConstruct, options: { readonly wait?: boolean } = {}): ConnectionBinding {
    const provider = DpiProvider.of(resource);
    provider.grantSecretRead(this.refreshToken);
    return {
      serviceToken: options.wait ? provider.waiterServiceToken() : provider.serviceToken,
      connection: this._connectionProperties(),
    };
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
    };
  }
}

function validateUrl(scope: IConstruct, prop: string, value: string | undefined): void {
  if (typeof value === 'string' && Token.isUnresolved(value)) {
    return;
  }
  const fix = 'use an https:// URL (http:// only for localhost, 127.0.0.1 or ::1)';
  if (typeof value !== 'string' || value.length === 0) {
    throw invalid(scope, prop, value, 'is not a URL', fix);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(scope, prop, value, 'is not a URL', fix);
  }
  if (url.username || url.password) {
    throw invalid(scope, prop, `${url.protocol}//***@${url.host}`, 'must not carry credentials', 'keep credentials in the refresh token secret');
  }
  if (url.protocol === 'https:') {
    return;
  }
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) {
    return;
  }
  throw invalid(scope, prop, value, 'is not accepted', fix);
}
