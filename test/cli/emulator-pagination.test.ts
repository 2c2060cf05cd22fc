/**
 * `dpi emulator --no-pagination`: every list answers all its records as `{data}` (no `links`, no `meta`), like a
 * service that does not paginate; without the flag, the vendor's paginated envelope.
 */
import { FakeSignals } from './helpers';
import { runDpi } from '../../src/cli/program';
import { DEFAULT_REFRESH_TOKEN } from '../../src/emulator';

/** Runs `dpi emulator` with `flags`, calls `fn` with its URL, then stops it (SIGTERM) and checks it exited 0. */
async function withEmulator(flags: string[], fn: (url: string) => Promise<void>): Promise<void> {
  const signals = new FakeSignals();
  let out = '';
  let ready: (u: string) => void = () => undefined;
  const listening = new Promise<string>((resolve) => {
    ready = resolve;
  });
  const run = runDpi(['emulator', '--port', '0', ...flags], {
    env: {},
    stdout: {
      write: (s: string) => {
        out += s;
        const m = /^listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out);
        if (m) ready(m[1]);
      },
    },
    stderr: { write: () => undefined },
    onInterrupt: signals.onInterrupt,
  });
  const url = await listening;
  try {
    await fn(url);
  } finally {
    signals.fire('SIGTERM');
    expect(await run).toBe(0);
  }
}

async function listKeys(url: string, path: string): Promise<string[]> {
  const auth = await fetch(`${url}/auth/api/ref`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ data: { type: 'APIAuth', attributes: { refresh_token: DEFAULT_REFRESH_TOKEN } } }),
  });
  const token = ((await auth.json()) as { data: { attributes: { token: string } } }).data.attributes.token;
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return Object.keys((await res.json()) as object).sort();
}

test('--no-pagination: lists are {data} only; by default the paginated envelope', async () => {
  await withEmulator(['--no-pagination'], async (url) => {
    expect(await listKeys(url, '/v2/product?page_size=1')).toEqual(['data']);
  });
  await withEmulator([], async (url) => {
    expect(await listKeys(url, '/v2/product?page_size=1')).toEqual(['data', 'links', 'meta']);
  });
});
