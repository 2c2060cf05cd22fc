/** Reading a response safely: a size limit, no redirect followed, no control character passed on. */

/**
 * The largest response body the client reads, in bytes (16 MiB; the service's largest answers, a page of 100 records
 * or a transaction tree, are far below it). A longer body is not read: the call fails naming the limit.
 */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** Control characters (C0, DEL, C1): what a service's text may not bring to a terminal or a log. */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/** A service's text without control characters (each one becomes a space): ESC sequences cannot reach a terminal. */
export function withoutControlCharacters(text: string): string {
  return text.replace(CONTROL_CHARACTERS, ' ');
}

/**
 * A redirect's target as a message may show it: scheme, host, port and path of the address (resolved against the
 * request's), never its user, password, query or fragment.
 */
export function redirectTarget(location: string | null, requestUrl: string): string {
  if (location === null || location === '') return 'no Location given';
  try {
    const u = new URL(location, requestUrl);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return 'an address that is not a URL';
  }
}

/** The body as text, read up to `limit` bytes; undefined (the rest not read) when it is longer. */
export async function readLimited(res: Response, limit: number): Promise<string | undefined> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await res.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (!res.body || typeof res.body.getReader !== 'function') {
    const text = await res.text();
    return Buffer.byteLength(text) > limit ? undefined : text;
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  // As `Response.text()`: UTF-8, a leading byte order mark dropped.
  return new TextDecoder().decode(Buffer.concat(chunks));
}

