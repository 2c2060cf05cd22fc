/** CloudFormation's limit on a custom resource response is 4,096 bytes; Data keeps well under it. */
export const MAX_DATA_BYTES = 3500;

function bytes(o: unknown): number {
  return Buffer.byteLength(JSON.stringify(o), 'utf8');
}

/**
 * Cuts comma-separated list values (longest first) at an item boundary, with a `...(+N more)` tail,
 * until the JSON of `data` is at most `max` bytes. Other values are cut plainly as a last resort.
 */
export function fitData(data: Record<string, string>, max: number = MAX_DATA_BYTES): Record<string, string> {
  const out: Record<string, string> = { ...data };
  for (let guard = 0; guard < 1000 && bytes(out) > max; guard++) {
    const key = Object.keys(out).sort((a, b) => out[b].length - out[a].length)[0];
    const value = out[key];
    const excess = bytes(out) - max;
    const target = Math.max(0, value.length - excess - 24);
    const items = value.split(',');
    if (items.length > 1) {
      let kept: string[] = [];
      let len = 0;
      for (const it of items) {
        if (len + it.length + 1 > target) break;
        kept.push(it);
        len += it.length + 1;
      }
      if (kept.length === items.length) kept = items.slice(0, -1);
      out[key] = `${kept.join(',')}${kept.length ? ',' : ''}...(+${items.length - kept.length} more)`;
    } else {
      out[key] = `${value.slice(0, target)}...`;
    }
  }
  return out;
}
