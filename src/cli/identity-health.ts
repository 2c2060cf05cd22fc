/**
 * Remote identity health for `dpi identities` and `dpi status`: the service marks an identity invalid
 * (`invalid_identity` 1, `invalidated_at`) when the seller revoked access or its token expired. Those are vendor read
 * fields: where the service's reads lack them (minimal reads) the health is unknown and said so, once.
 */
import { sanitize } from './format';
import type { RemoteIdentity } from '../client';

/** One identity the service marks invalid. */
export interface InvalidIdentity {
  id: string;
  name: string | null;
  invalidated_at: string | null;
}

/** What the identity reads say about health. */
export interface IdentityHealth {
  /** False when no identity carries `invalid_identity` (minimal reads): health unknown. */
  known: boolean;
  invalid: InvalidIdentity[];
}

/** The one line said when the reads carry no health fields. */
export const HEALTH_NOT_SHOWN = 'note: remote identity health is not shown: the service\'s identity reads carry no invalid_identity '
  + 'or invalidated_at (minimal reads), so an identity whose seller revoked access or whose token expired cannot be told apart';

/** What the seller must do about an invalid identity. */
export const INVALID_IDENTITY_FIX = 'the seller must re-authorize it in the service\'s UI (or authorize a new identity and use its ID)';

/** `valid`, `invalid` or `unknown` (the field absent). */
export function healthOf(r: RemoteIdentity): 'valid' | 'invalid' | 'unknown' {
  if (r.invalid_identity === undefined || r.invalid_identity === null) return 'unknown';
  return Number(r.invalid_identity) === 1 ? 'invalid' : 'valid';
}

/** The health of a list of identities (an empty list is known: nothing to report). */
export function identityHealth(ids: RemoteIdentity[]): IdentityHealth {
  return {
    known: ids.length === 0 || ids.some((r) => healthOf(r) !== 'unknown'),
    invalid: ids.filter((r) => healthOf(r) === 'invalid')
      .map((r) => ({ id: r.id, name: r.name ?? null, invalidated_at: r.invalidated_at ?? null })),
  };
}

/** `invalid since <date>` / `valid` / `-`. */
export function healthCell(r: RemoteIdentity): string {
  const h = healthOf(r);
  if (h === 'invalid') return r.invalidated_at ? `INVALID since ${r.invalidated_at}` : 'INVALID';
  return h === 'valid' ? 'valid' : '-';
}

/** One line naming the invalid identities and what to do, or '' when there are none. */
export function invalidIdentitiesLine(h: IdentityHealth): string {
  if (h.invalid.length === 0) return '';
  const list = h.invalid.map((r) => `${r.id}${r.name ? ` (${r.name})` : ''}${r.invalidated_at ? ` since ${r.invalidated_at}` : ''}`).join(', ');
  const n = h.invalid.length;
  return sanitize(`${n} invalid remote identit${n === 1 ? 'y' : 'ies'}: ${list}; ${n === 1 ? 'its' : 'their'} pipelines and subscriptions get no data: ${INVALID_IDENTITY_FIX}`);
}
