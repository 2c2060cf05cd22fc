/**
 * The stable assignment of a fleet's remote identities to nested stacks (internal).
 */
import { createHash } from 'node:crypto';

/**
 * Jump consistent hash (Lamping and Veach, 2014) of a 64-bit key into `buckets` buckets: when the number of
 * buckets grows from n to n + 1, only about 1/(n + 1) of the keys move, all into the new bucket.
 */
export function jumpConsistentHash(key: bigint, buckets: number): number {
  let k = BigInt.asUintN(64, key);
  let b = -1;
  let j = 0;
  while (j < buckets) {
    b = j;
    k = BigInt.asUintN(64, k * 2862933555777941757n + 1n);
    j = Math.floor((b + 1) * (2 ** 31 / Number(k / 8589934592n + 1n))); // k >> 33
  }
  return b;
}

/**
 * The nested stack (0 .. `buckets` - 1) of a remote identity: the jump consistent hash of the first 8 bytes of
 * SHA-256 of its decimal ID (sequential IDs spread evenly). Fixed: changing it would move every pipeline.
 */
export function fleetBucketOf(remoteIdentityId: number, buckets: number): number {
  const digest = createHash('sha256').update(String(remoteIdentityId)).digest();
  return jumpConsistentHash(digest.readBigUInt64BE(0), buckets);
}
