/**
 * Which emulator URLs may receive the refresh token: plain `http://` only to this machine (a loopback address),
 * anything else over `https://`. Shared by `dpi local-deploy --emulator` (the CLI checks it before the run starts)
 * and `runLocalDeploy({ emulatorUrl })` from code (the runner checks it before it sends anything).
 */

/**
 * Whether a URL host is this machine: an IPv4 address in 127.0.0.0/8, `localhost` or `[::1]` (as `URL.hostname`
 * gives them: IPv4 in dotted decimal, IPv6 in brackets and compressed, names in lower case).
 */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h === '[::1]' || h === '::1') return true;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return m !== null && m[1] === '127' && m.slice(2).every((x) => Number(x) <= 255);
}

/** A URL for messages: scheme, host, port and path, without credentials, query or fragment. */
export function shownUrl(u: URL): string {
  return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
}

/**
 * Why an address must not carry the refresh token, or undefined when it may: not a URL, not http(s), or plain
 * `http://` to a host that is not this machine. `what` names the flag or option; the message names the URL without
 * credentials, query or fragment, and never the token.
 */
export function insecureTransportReason(what: string, url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `${what}: not a valid URL`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `${what}: must be an http(s) URL`;
  if (u.protocol === 'http:' && !isLoopbackHost(u.hostname)) {
    return `${what}: ${shownUrl(u)} is plain http to a host that is not this machine, and the refresh token (and the `
      + 'access tokens made from it) would cross the network unencrypted; use an https:// URL (plain http is accepted only for a '
      + 'loopback address: 127.0.0.0/8, localhost, [::1], e.g. dpi emulator)';
  }
  return undefined;
}

/** Throws (a plain Error) when `url` must not carry the refresh token (see `insecureTransportReason`). */
export function requireSecureEmulatorUrl(what: string, url: string): void {
  const reason = insecureTransportReason(what, url);
  if (reason) throw new Error(reason);
}
