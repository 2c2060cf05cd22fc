/** Small statistics and formatting helpers of the benchmarks (no dependencies). */

/** Median of a non-empty list (mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Milliseconds with a precision that suits the magnitude: `0.412 ms`, `12.3 ms`, `1530 ms`. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  if (ms < 10) return `${ms.toFixed(3)} ms`;
  if (ms < 100) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(0)} ms`;
}

/** A ratio as `2.31x`. */
export function formatRatio(r: number): string {
  return Number.isFinite(r) ? `${r.toFixed(2)}x` : 'n/a';
}

/** `min-max` of a list of counts, or the single value when they are all equal. */
export function formatRange(values: readonly number[]): string {
  if (values.length === 0) return 'n/a';
  const min = Math.min(...values);
  const max = Math.max(...values);
  return min === max ? String(min) : `${min}-${max}`;
}

/** Deterministic PRNG in [0, 1) (Park-Miller minimal standard), so the backoff jitter is the same on every run. */
export function seededRandom(seed: number): () => number {
  const m = 2_147_483_647;
  let state = Math.abs(Math.floor(seed)) % m || 1;
  return () => {
    state = (state * 48_271) % m;
    return (state - 1) / (m - 1);
  };
}
