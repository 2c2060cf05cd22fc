import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dpi, FakeSignals } from './helpers';
import { buildProgram, DPI_VERSION, runDpi } from '../../src/cli/program';
import { DEFAULT_REFRESH_TOKEN } from '../../src/emulator';

describe('dpi program', () => {
  test('--help lists every command and the connection settings; --version prints the version', async () => {
    const h = await dpi(['--help']);
    expect(h.code).toBe(0);
    for (const c of ['emulator', 'local-deploy', 'journal', 'orphans', 'tx', 'status', 'drift', 'products', 'stages', 'identities', 'storages', 'import']) {
      expect(h.stdout).toMatch(new RegExp(`^  ${c} `, 'm'));
    }
    expect(h.stdout).toContain('DPI_REFRESH_TOKEN or --refresh-token-file FILE');
    expect(h.stdout).toContain('Exit codes: 0 success; 1 dpi status found a record in ERROR, dpi drift found drift, dpi orphans found orphans, or\ndpi local-deploy: a resource failed;');
    const tx = await dpi(['tx', '--help']);
    expect(tx.code).toBe(0);
    expect(tx.stdout).toContain('--base-url <url>');
    expect(tx.stdout).toContain('--refresh-token-file <file>');
    expect(tx.stdout).not.toMatch(/--refresh-token </);
    const v = await dpi(['--version']);
    expect(v.code).toBe(0);
    expect(v.stdout).toBe(`${DPI_VERSION}\n`);
    expect(DPI_VERSION).toMatch(/^\d+\.\d+\.\d+/);
  });

  test('no command or an unknown command is a usage error (exit 2)', async () => {
    expect((await dpi([])).code).toBe(2);
    const u = await dpi(['statsu']);
    expect(u.code).toBe(2);
    expect(u.stderr).toContain("unknown command 'statsu'");
    expect(u.stderr).toContain('status');
  });

  test('buildProgram gives a commander program with the commands', () => {
    const p = buildProgram({ stdout: { write: () => true }, stderr: { write: () => true }, env: {} });
    expect(p.name()).toBe('dpi');
    expect(p.commands.map((c) => c.name()).sort()).toEqual(
      ['drift', 'emulator', 'identities', 'import', 'journal', 'local-deploy', 'orphans', 'plan', 'products', 'stages', 'status', 'storages', 'subscriptions', 'tx'],
    );
  });
});

describe('dpi emulator', () => {
  test('prints "listening on URL" first, then the token hint; serves until interrupted, then stops cleanly (exit 0)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dpi-emu-'));
    const fixtures = join(dir, 'fixtures.json');
    writeFileSync(fixtures, JSON.stringify({ storages: [{ id: 777, account: 1001, name: 'Fixture bucket', status: 'active', product: 4001 }] }));
    const signals = new FakeSignals();
    let out = '';
    let err = '';
    let firstLine: (url: string) => void = () => undefined;
    const listening = new Promise<string>((resolve) => {
      firstLine = resolve;
    });
    const run = runDpi(['emulator', '--port', '0', '--fixtures', fixtures, '--token-ttl', '120'], {
      env: {},
      stdout: {
        write: (s: string) => {
          out += s;
          const m = /^listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out);
          if (m) firstLine(m[1]);
        },
      },
      stderr: { write: (s: string) => { err += s; } },
      onInterrupt: signals.onInterrupt,
    });
    const url = await listening;
    expect(out.split('\n')[0]).toBe(`listening on ${url}`);
    expect(out.split('\n').slice(1).join('\n')).toContain(`export DPI_REFRESH_TOKEN=${DEFAULT_REFRESH_TOKEN}`);

    // The server answers the CLI itself, with the fixtures file loaded.
    const s = await dpi(['storages', '--json'], { env: { DPI_BASE_URL: url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } });
    expect((JSON.parse(s.stdout) as Array<{ id: string }>).map((x) => x.id)).toEqual(['501', '777']);
    // --token-ttl reaches the emulator.
    const auth = await fetch(`${url}/auth/api/ref`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: { type: 'APIAuth', attributes: { refresh_token: DEFAULT_REFRESH_TOKEN } } }),
    });
    expect(((await auth.json()) as { data: { attributes: { expires_in: number } } }).data.attributes.expires_in).toBe(120);

    expect(signals.listening).toBe(1);
    signals.fire('SIGTERM');
    expect(await run).toBe(0);
    expect(err).toContain('SIGTERM: stopping the emulator');
    expect(err).toContain('emulator stopped');
    await expect(fetch(`${url}/v2/product`)).rejects.toThrow();
    expect(signals.listening).toBe(0);
  });

  test('--state-file keeps the state across runs', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'dpi-emu-')), 'state.json');
    const runOnce = async (fn: (url: string) => Promise<void>): Promise<void> => {
      const signals = new FakeSignals();
      let out = '';
      let ready: (u: string) => void = () => undefined;
      const listening = new Promise<string>((resolve) => {
        ready = resolve;
      });
      const run = runDpi(['emulator', '--state-file', file], {
        env: {},
        stdout: {
          write: (s: string) => {
            out += s;
            const m = /^listening on (\S+)\n/.exec(out);
            if (m) ready(m[1]);
          },
        },
        stderr: { write: () => true },
        onInterrupt: signals.onInterrupt,
      });
      await fn(await listening);
      signals.fire();
      expect(await run).toBe(0);
    };
    await runOnce(async (url) => {
      const res = await fetch(`${url}/_emulator/fixtures`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ storages: [{ id: 778, account: 1001, name: 'Kept', status: 'active', product: 4001 }] }),
      });
      expect(res.status).toBe(200);
    });
    await runOnce(async (url) => {
      const s = await dpi(['storages', '--json'], { env: { DPI_BASE_URL: url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } });
      expect((JSON.parse(s.stdout) as Array<{ id: string }>).map((x) => x.id)).toEqual(['501', '778']);
    });
  });

  test('bad flags and fixtures are usage errors', async () => {
    const port = await dpi(['emulator', '--port', '70000']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port: must be between 0 and 65535');
    const fx = await dpi(['emulator', '--fixtures', '/nonexistent/fixtures.json']);
    expect(fx.code).toBe(2);
    expect(fx.stderr).toContain('cannot read fixtures file /nonexistent/fixtures.json');
  });
});

describe('help texts', () => {
  test('defaults are shown as values, not quoted strings (numbers as numbers)', async () => {
    const emu = await dpi(['emulator', '--help']);
    expect(emu.stdout).toContain('(default: 0)');
    expect(emu.stdout).toContain('(default: 1000/300)');
    const st = await dpi(['status', '--help']);
    expect(st.stdout).toContain('(default: 3)');
    expect(emu.stdout).toContain('(default: 127.0.0.1)');
    const ld = await dpi(['local-deploy', '--help']);
    expect(ld.stdout).toContain('(default: ./cdk.out)');
    expect(emu.stdout + st.stdout + ld.stdout).not.toContain('(default: "');
  });
});
