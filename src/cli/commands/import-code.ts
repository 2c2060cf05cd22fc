/**
 * How `dpi import` writes what the service answered into TypeScript: nothing the service sends is trusted to be code.
 * IDs are emitted only as positive decimal integers, every string through `JSON.stringify`, every comment on one line.
 */
import { CliError } from '../errors';

/** A record ID as `dpi import` writes it: a positive decimal integer, nothing else. */
export const POSITIVE_ID = /^[1-9][0-9]*$/;

/** The line terminators of ECMAScript (a `//` comment ends at any of them). */
const LINE_TERMINATORS = /[\r\n\u2028\u2029]+/g;

/**
 * A TypeScript string literal of `s` (single-quoted). The escaping is `JSON.stringify`'s (every control character,
 * backslash and lone surrogate escaped), plus U+2028 and U+2029, which `JSON.stringify` leaves raw and engines before
 * ES2019 read as line terminators; the double quotes JSON escapes are unescaped and single quotes escaped instead.
 */
export function tsString(s: string): string {
  const json = JSON.stringify(String(s)).replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  // Escapes are read left to right in pairs (`\\` then `"` is two escapes), so only a real `\"` becomes `"`.
  const inner = json.slice(1, -1).replace(/\\.|'/g, (m) => (m === '\\"' ? '"' : m === '\'' ? '\\\'' : m));
  return `'${inner}'`;
}

/**
 * The text of a comment: one line (every line terminator, \r, \n, U+2028 and U+2029, becomes a space), no `*\/` (so it
 * cannot end a block comment either) and no other control character.
 */
export function commentText(s: string): string {
  return String(s).replace(LINE_TERMINATORS, ' ').replace(/\*\//g, '* /')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
}

/** A value the service sent, quoted for a message (JSON-escaped, shortened). */
export function shown(v: unknown): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
  const q = JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text);
  return q.replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The ID as the code writes it (a positive decimal integer); a CliError naming the record, the field and the value
 * otherwise: `dpi import` writes nothing rather than a value that is not an ID.
 */
export function idCode(v: unknown, what: string): string {
  const text = typeof v === 'number' ? String(v) : v;
  if (typeof text === 'string' && POSITIVE_ID.test(text) && Number.isSafeInteger(Number(text))) return text;
  throw new CliError(`dpi import: the service answered ${what} ${shown(v)}, which is not an ID (a positive decimal integer); `
    + 'nothing was written (the service\'s answer is not what its interface shows: check the service address)');
}
