/**
 * The emulator has no authentication on its admin API (`/_emulator/*`: reset, faults, the state with its tokens) and
 * serves the service routes to any bearer of its default token. On this machine that is fine for tests and demos; a web
 * page open in a browser is the one stranger that can reach a loopback port. Two doors are closed:
 * - DNS rebinding: a page of `evil.example` whose name now resolves to 127.0.0.1 sends `Host: evil.example`. While the
 *   emulator listens on a loopback address, a request must name a loopback host (`127.0.0.1`, `localhost`, `[::1]`).
 * - Cross-site requests: a page can send simple requests (a `text/plain` POST, a form) without a preflight, and the
 *   browser then adds `Origin` (and `Sec-Fetch-Site`). A request whose origin is not a loopback address is refused.
 *   Clients that are not browsers (the library, curl, tests) send neither header.
 */

/** True for the names of this machine's loopback interface. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The host name of a `Host` header (`name[:port]`, `[v6][:port]`), or undefined when it has none. */
function hostOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^(\[[^\]]*\]|[^:]+)(:\d+)?$/.exec(header.trim());
  return m ? m[1] : undefined;
}

/**
 * Why a request is refused (a 403 detail), or undefined when it may go on. `loopbackOnly`: the emulator listens on a
 * loopback address (the default), so every request must name one.
 */
export function browserRefusal(headers: Record<string, string | string[] | undefined>, loopbackOnly: boolean): string | undefined {
  const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);
  if (loopbackOnly) {
    const host = hostOf(one(headers.host));
    if (host === undefined || !isLoopbackHost(host)) {
      return `the emulator answers requests for this machine only (Host: ${JSON.stringify(one(headers.host) ?? '')} is not a loopback address)`;
    }
  }
  const origin = one(headers.origin);
  if (origin !== undefined && origin !== 'null') {
    let name: string | undefined;
    try {
      name = new URL(origin).hostname;
    } catch {
      name = undefined;
    }
    if (name === undefined || !isLoopbackHost(name)) return `cross-site request refused (Origin: ${JSON.stringify(origin)})`;
  } else if (origin === 'null' || one(headers['sec-fetch-site']) === 'cross-site') {
    return 'cross-site request refused';
  }
  return undefined;
}
