/** A fixed-seed sample of `n` items (order kept), so the CI sample is the same on every run. */
export function sample<T>(items: readonly T[], n: number, seed: number): T[] {
  if (n >= items.length) return [...items];
  // Park-Miller minimal standard generator (exact in doubles).
  let a = (Math.abs(Math.floor(seed)) % 2147483646) + 1;
  const rand = (): number => {
    a = (a * 48271) % 2147483647;
    return (a - 1) / 2147483646;
  };
  const idx = items.map((_, i) => i);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  return idx.slice(0, n).sort((x, y) => x - y).map((i) => items[i]);
}
