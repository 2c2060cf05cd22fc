/**
 * `ServiceEndpoints`: the one typed way to give a `ServiceConnection` the service's addresses (six hosts, or one
 * origin that serves them all), validated at synth with the connection's path.
 */
import { Token } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { invalid } from './validation';

/** The six base addresses of the service's parts (`ServiceEndpoints.of()`). */
export interface ServiceEndpointUrls {
  /**
   * Base address of the service gateway (paths beginning `/service/...`). An `https://` URL; `http://` only for a
   * loopback host (`localhost`, `127.0.0.1`, `::1`), e.g. the local emulator; the same for the five others.
   */
  readonly baseUrl: string;

  /** Base address of the subscriptions service (`/v2/sub`, `/v2/product`, `/storages`). */
  readonly subscriptionsUrl: string;

  /** Base address of the account service (`/account`). */
  readonly accountUrl: string;

  /** Base address of the user service (`/user`). */
  readonly userUrl: string;

  /** Base address of the remote identity service (`/sri`, `/ri`). */
  readonly remoteIdentityUrl: string;

  /** Base address of the authentication service (refresh token exchange). */
  readonly authUrl: string;
}

const URL_NAMES = ['baseUrl', 'subscriptionsUrl', 'accountUrl', 'userUrl', 'remoteIdentityUrl', 'authUrl'] as const;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * Where the service is: its six hosts (`ServiceEndpoints.of()`), or one origin that serves every part
 * (`ServiceEndpoints.singleOrigin()`: the local emulator, a proxy). Checked at synth by the `ServiceConnection` that
 * uses it: each URL is `https://` (`http://` only for a loopback host) and carries no credentials; an error names the
 * connection's path, the URL and the bad value.
 *
 * @example
 * const endpoints = ServiceEndpoints.of({
 *   baseUrl: 'https://api.example-dpi.com',
 *   subscriptionsUrl: 'https://subscriptions.example-dpi.com',
 *   accountUrl: 'https://account.example-dpi.com',
 *   userUrl: 'https://user.example-dpi.com',
 *   remoteIdentityUrl: 'https://remote-identity.example-dpi.com',
 *   authUrl: 'https://authentication.example-dpi.com',
 * });
 */
export class ServiceEndpoints {
  /** The service's six hosts. */
  public static of(urls: ServiceEndpointUrls): ServiceEndpoints {
    return new ServiceEndpoints({ ...urls }, false);
  }

  /** One origin that serves every part of the service (the local emulator, or a proxy in front of the service). */
  public static singleOrigin(url: string): ServiceEndpoints {
    return new ServiceEndpoints({ baseUrl: url, subscriptionsUrl: url, accountUrl: url, userUrl: url, remoteIdentityUrl: url, authUrl: url }, true);
  }

  /** The six base addresses (the same URL six times for `singleOrigin()`). */
  public readonly urls: ServiceEndpointUrls;
  /** Whether one origin serves every part (`singleOrigin()`). */
  public readonly isSingleOrigin: boolean;

  private constructor(urls: ServiceEndpointUrls, singleOrigin: boolean) {
    this.urls = urls;
    this.isSingleOrigin = singleOrigin;
  }

  /**
   * The URLs, validated for `scope` (errors name `<scope path>: endpoints.<url> '<value>'`).
   *
   * @internal
   */
  public _validate(scope: IConstruct, prop = 'endpoints'): ServiceEndpointUrls {
    if (this.isSingleOrigin) {
      validateUrl(scope, `${prop} (ServiceEndpoints.singleOrigin)`, this.urls.baseUrl);
      return this.urls;
    }
    const missing = URL_NAMES.filter((n) => this.urls?.[n] === undefined);
    if (missing.length > 0) {
      throw new Error(`${scope.node.path}: ${prop}: ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} missing; the service has separate `
        + 'hosts for the gateway, subscriptions, account, user, remote identities and authentication: give all six URLs to '
        + 'ServiceEndpoints.of(), or use ServiceEndpoints.singleOrigin(url) for one origin (the emulator, a proxy)');
    }
    for (const name of URL_NAMES) validateUrl(scope, `${prop}.${name}`, this.urls[name]);
    return this.urls;
  }
}

/** A service URL: `https://`, or `http://` on a loopback host; no credentials. Tokens are checked at deploy time. */
export function validateUrl(scope: IConstruct, prop: string, value: string | undefined): void {
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

/** The address props of `ServiceConnectionProps` (internal). */
export interface EndpointProps {
  readonly endpoints?: ServiceEndpoints;
  readonly singleOriginUrl?: string;
  readonly baseUrl?: string;
  readonly subscriptionsUrl?: string;
  readonly accountUrl?: string;
  readonly userUrl?: string;
  readonly remoteIdentityUrl?: string;
  readonly authUrl?: string;
}

/**
 * The six URLs: from `endpoints`, or from the deprecated props (six URLs, or `singleOriginUrl` alone), never both.
 */
export function resolveEndpoints(scope: IConstruct, props: EndpointProps): ServiceEndpointUrls {
  const urls: Array<[keyof EndpointProps, string | undefined]> = [
    ['baseUrl', props.baseUrl],
    ['subscriptionsUrl', props.subscriptionsUrl],
    ['accountUrl', props.accountUrl],
    ['userUrl', props.userUrl],
    ['remoteIdentityUrl', props.remoteIdentityUrl],
    ['authUrl', props.authUrl],
  ];
  const given = urls.filter(([, v]) => v !== undefined);
  if (props.endpoints !== undefined) {
    const old = [...given.map(([n]) => n), ...(props.singleOriginUrl !== undefined ? ['singleOriginUrl'] : [])];
    if (old.length > 0) {
      throw invalid(scope, 'endpoints', props.endpoints.urls?.baseUrl, `cannot be combined with ${old.join(', ')}`,
        'give the addresses once, in endpoints (ServiceEndpoints.of({...}) or ServiceEndpoints.singleOrigin(url))');
    }
    return props.endpoints._validate(scope);
  }
  if (props.singleOriginUrl !== undefined) {
    if (given.length > 0) {
      throw invalid(scope, 'singleOriginUrl', props.singleOriginUrl, `cannot be combined with ${given.map(([n]) => n).join(', ')}`,
        'give endpoints: ServiceEndpoints.singleOrigin(url) (one origin serves every service) or ServiceEndpoints.of({...}) (six URLs)');
    }
    validateUrl(scope, 'singleOriginUrl', props.singleOriginUrl);
    const u = props.singleOriginUrl;
    return { baseUrl: u, subscriptionsUrl: u, accountUrl: u, userUrl: u, remoteIdentityUrl: u, authUrl: u };
  }
  const missing = urls.filter(([, v]) => v === undefined).map(([n]) => n);
  if (missing.length === urls.length) {
    throw new Error(`${scope.node.path}: endpoints is missing; give endpoints: ServiceEndpoints.of({ baseUrl, subscriptionsUrl, accountUrl, `
      + 'userUrl, remoteIdentityUrl, authUrl }) (the service\'s six hosts), or ServiceEndpoints.singleOrigin(url) for one origin (the emulator, a proxy)');
  }
  if (missing.length > 0) {
    throw new Error(`${scope.node.path}: ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} missing; the service has separate hosts `
      + 'for the gateway, subscriptions, account, user, remote identities and authentication: give all six URLs, best as '
      + 'endpoints: ServiceEndpoints.of({...}), or ServiceEndpoints.singleOrigin(url) for one origin (the emulator, a proxy)');
  }
  for (const [name, value] of urls) validateUrl(scope, name, value);
  return {
    baseUrl: props.baseUrl!,
    subscriptionsUrl: props.subscriptionsUrl!,
    accountUrl: props.accountUrl!,
    userUrl: props.userUrl!,
    remoteIdentityUrl: props.remoteIdentityUrl!,
    authUrl: props.authUrl!,
  };
}
