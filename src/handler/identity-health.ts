/**
 * Identity health before a create: one `GET /ri/{id}`. An identity the service marks invalid (`invalid_identity` 1:
 * the seller revoked access or its token expired) cannot authorize the pipeline or subscription, so the create fails
 * before any changing call. Under minimal reads (the field absent) or when the read fails, the health is unknown and
 * the create goes on: this check never blocks a deploy on missing data.
 */
import { HandlerError, messageOf } from './errors';
import { log } from './log';
import { Runtime } from './runtime';

/** The sentence telling the user what the seller must do about an invalid identity. */
export const INVALID_IDENTITY_FIX = 'the seller must re-authorize it in the service\'s UI (or authorize a new identity and use its ID)';

/** Throws a HandlerError naming the identity when the service marks it invalid; unknown health never fails. */
export async function refuseInvalidIdentity(rt: Runtime, identityId: string | undefined, what: string): Promise<void> {
  if (identityId === undefined || identityId === '') return;
  let ri;
  try {
    ri = await rt.client.remoteIdentities.get(identityId);
  } catch (e) {
    log({ level: 'WARNING', msg: 'the remote identity could not be read: its health is not checked', identity: identityId, error: messageOf(e) });
    return;
  }
  if (Number(ri.invalid_identity) !== 1) return;
  const name = ri.name ? ` (${ri.name})` : '';
  const since = ri.invalidated_at ? ` since ${ri.invalidated_at}` : '';
  throw new HandlerError(`remote identity ${identityId}${name} is invalid${since} (the seller revoked access or its token expired): `
    + `${what} was not created; ${INVALID_IDENTITY_FIX}, then deploy again`);
}
