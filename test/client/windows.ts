/** The most sends of `times` (sorted) in any window of `windowMs` (a send at t counts in [t, t + windowMs)). */
export function mostInWindow(times: number[], windowMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i] - times[j] >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}
