/** Base addresses of the service's parts (no trailing slash needed). */
export interface ServiceEndpoints {
  /** Gateway: paths beginning `/service/...`. */
  baseUrl: string;
  /** Subscriptions service (`/v2/sub`, `/product`, `/storages`, ...). */
  subscriptionsUrl: string;
  /** Account service (`/account`). */
  accountUrl: string;
  /** User service (`/user`). */
  userUrl: string;
  /** Remote identity service (`/sri`, `/ri`). */
  remoteIdentityUrl: string;
  /** Authentication service (`/auth/api/ref`). */
  authUrl: string;
}

/** Uses the same URL for every base address (e.g. the emulator, which serves all of them). */
export function endpointsFromBase(url: string): ServiceEndpoints {
  const u = url.replace(/\/+$/, '');
  return { baseUrl: u, subscriptionsUrl: u, accountUrl: u, userUrl: u, remoteIdentityUrl: u, authUrl: u };
}
