import type { CliIoInit, InterruptSignal } from '../../src/cli/io';
import { runDpi } from '../../src/cli/program';
import { DEFAULT_REFRESH_TOKEN, EmulatorFixtures, ReadMode, RunningEmulator, startEmulator } from '../../src/emulator';

/** The subscription of account 1001 used by the CLI tests. */
export const SUB = 9001;

/** Fixtures: a product-3001 subscription of the default account (1001). */
export const CLI_FIXTURES: EmulatorFixtures = {
  subscriptions: [{
    id: SUB,
    account: 1001,
    user: 2001,
    product: 3001,
    name: 'CLI orders',
    status: 'active',
    date_start: '2026-01-01T00:00:00Z',
    remote_identity: 362,
    storage_group: 501,
    product_parameters: { remote_identity_id: '362', marketplace_id: 'ATVPDKIKX0DER' },
  }],
};

/** Every text any test of this process captured (for the "secrets never printed" checks). */
export const ALL_OUTPUT: string[] = [];

export interface DpiRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions extends Omit<CliIoInit, 'stdout' | 'stderr' | 'env'> {
  env?: Record<string, string | undefined>;
  /** Default: DPI_BASE_URL = the emulator, DPI_REFRESH_TOKEN = the default token. */
  emu?: RunningEmulator;
}

/** Runs dpi in-process with captured output. */
export async function dpi(args: string[], o: RunOptions = {}): Promise<DpiRun> {
  let stdout = '';
  let stderr = '';
  const env = o.env ?? (o.emu ? { DPI_BASE_URL: o.emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } : {});
  const { emu: _emu, env: _env, ...rest } = o;
  const code = await runDpi(args, {
    isTTY: false,
    ...rest,
    env,
    stdout: { write: (s: string) => { stdout += s; } },
    stderr: { write: (s: string) => { stderr += s; } },
  });
  ALL_OUTPUT.push(stdout, stderr);
  return { code, stdout, stderr };
}

export async function startCliEmulator(fixtures: EmulatorFixtures = CLI_FIXTURES, reads: ReadMode = 'minimal'): Promise<RunningEmulator> {
  return startEmulator({ host: '127.0.0.1', port: 0, fixtures, reads });
}

/**
 * The per-file lifecycle of the CLI tests: starts the CLI emulator before all tests and hands it to `bind`, stops it
 * after all tests; with `resetEach`, resets it before each test.
 */
export function useCliEmulator(bind: (emu: RunningEmulator) => void, opts: { resetEach?: boolean; reads?: ReadMode } = {}): void {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startCliEmulator(CLI_FIXTURES, opts.reads);
    bind(emu);
  });
  afterAll(async () => {
    await emu.stop();
  });
  if (opts.resetEach) {
    beforeEach(async () => {
      await reset(emu);
    });
  }
}

/**
 * Registers the test that no output captured so far contains the refresh token or a JWT. Call it last in the file
 * (tests run in file order), so that it covers every run of the file, error paths included.
 */
export function testNoSecretsPrinted(): void {
  test('no output of this file contains the refresh token or a JWT', () => {
    expect(ALL_OUTPUT.length).toBeGreaterThan(10);
    const all = ALL_OUTPUT.join('\n');
    expect(all).not.toContain(DEFAULT_REFRESH_TOKEN);
    expect(all).not.toMatch(/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/);
  });
}

/** A TX report as a pipeline component sends it (`POST /_emulator/tx`). */
export interface TxReport {
  id: string;
  sender: string;
  status: string;
  subscription_id?: number;
  payload_name?: string;
  attribution_date?: string;
  job_id?: string;
  timestamp?: number;
  parent?: string;
  children?: string[];
  error_code?: string;
  error_message?: string;
}

export async function ingest(emu: RunningEmulator, ...reports: TxReport[]): Promise<void> {
  for (const r of reports) {
    const res = await fetch(`${emu.url}/_emulator/tx`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(r),
    });
    if (res.status !== 200) throw new Error(`ingest ${r.id}: ${res.status} ${await res.text()}`);
  }
}

export interface SeenRequest { method: string; path: string; query: Record<string, string>; status: number }

/** Requests the emulator saw (outside /_emulator/); `clear` empties the log first. */
export async function requests(emu: RunningEmulator, path?: string): Promise<SeenRequest[]> {
  const res = await fetch(`${emu.url}/_emulator/requests`);
  const all = await res.json() as SeenRequest[];
  return path ? all.filter((r) => r.path === path) : all;
}

export async function clearRequests(emu: RunningEmulator): Promise<void> {
  await fetch(`${emu.url}/_emulator/requests`, { method: 'DELETE' });
}

export async function fault(emu: RunningEmulator, f: object): Promise<void> {
  const res = await fetch(`${emu.url}/_emulator/faults`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(f),
  });
  if (res.status !== 200) throw new Error(`fault: ${res.status} ${await res.text()}`);
}

/** Adds fixture records (admin `POST /fixtures`). */
export async function addFixtures(emu: RunningEmulator, f: EmulatorFixtures): Promise<void> {
  const res = await fetch(`${emu.url}/_emulator/fixtures`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(f),
  });
  if (res.status !== 200) throw new Error(`fixtures: ${res.status} ${await res.text()}`);
}

/** A seller identity the service marks invalid (the emulator shows `invalidated_at` 2024-01-01T00:00:00 under vendor reads). */
export const REVOKED_IDENTITY = { id: 366, account: 1001, name: 'Revoked seller', remote_identity_type_id: 17, invalid_identity: 1 as const };

export async function reset(emu: RunningEmulator): Promise<void> {
  await fetch(`${emu.url}/_emulator/reset`, { method: 'POST' });
}

/** A controllable interrupt (the fake SIGINT/SIGTERM of in-process runs). */
export class FakeSignals {
  private handlers: Array<(s: InterruptSignal) => void> = [];
  readonly onInterrupt = (h: (s: InterruptSignal) => void): (() => void) => {
    this.handlers.push(h);
    return () => {
      this.handlers = this.handlers.filter((x) => x !== h);
    };
  };
  get listening(): number {
    return this.handlers.length;
  }
  fire(s: InterruptSignal = 'SIGINT'): void {
    for (const h of [...this.handlers]) h(s);
  }
}

/** Strips ANSI colour codes. */
export const plain = (s: string): string => s.replace(/\x1b\[[0-9;]*[mKJH]/g, '');
