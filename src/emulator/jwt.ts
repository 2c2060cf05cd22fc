import { createHmac, timingSafeEqual } from 'node:crypto';

export interface TokenClaims {
  account: number;
  user: number;
  iat: number;
  exp: number;
  /** The vendor's claims (issued tokens carry them; verification reads the standard ones above). */
  account_id?: number;
  user_id?: number;
  /** Unix seconds, equal to `exp`. */
  expires_at?: number;
}

function b64url(input: Buffer | string): string {
  return Buffer.from(input).toString('base64url');
}

/** Signs an HS256 JWT. */
export function signJwt(claims: TokenClaims, secret: Buffer): string {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = b64url(JSON.stringify(claims));
  const sig = createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${sig}`;
}

export type VerifyResult = { ok: true; claims: TokenClaims } | { ok: false; reason: string };

/** Verifies signature, algorithm and expiry (`now` in Unix seconds). Never echoes the token. */
export function verifyJwt(token: string, secret: Buffer, now: number): VerifyResult {
  const parts = token.split('.');
  if (parts.length !== 3 || parts.some((p) => p === '' || !/^[A-Za-z0-9_-]+$/.test(p))) {
    return { ok: false, reason: 'malformed token' };
  }
  const [head, body, sig] = parts;
  const expected = createHmac('sha256', secret).update(`${head}.${body}`).digest();
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: 'invalid token signature' };
  }
  let header: unknown;
  let claims: unknown;
  try {
    header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed token' };
  }
  if (!isObj(header) || header.alg !== 'HS256') return { ok: false, reason: 'unsupported token algorithm' };
  if (!isObj(claims) || typeof claims.account !== 'number' || typeof claims.user !== 'number'
    || typeof claims.exp !== 'number' || typeof claims.iat !== 'number') {
    return { ok: false, reason: 'malformed token claims' };
  }
  if (now >= claims.exp) return { ok: false, reason: 'token expired' };
  return { ok: true, claims: { account: claims.account, user: claims.user, iat: claims.iat, exp: claims.exp } };
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
