import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ReadMode, RunningEmulator, startEmulator } from '../../src/emulator';
import { dpi } from '../cli/helpers';

/**
 * The sample output of the lookup commands in docs/cli.md is what `dpi` prints against the emulator's default
 * fixtures: each ```console block of one command that runs `dpi products`, `dpi stages`, `dpi identities` or `dpi storages`, in the
 * read mode its comment names (`--reads vendor`; otherwise the default, minimal).
 */
interface Sample {
  readonly line: number;
  readonly args: string[];
  readonly reads: ReadMode;
  readonly output: string;
}

function samples(): Sample[] {
  const lines = readFileSync(join(__dirname, '..', '..', 'docs', 'cli.md'), 'utf8').split('\n');
  const out: Sample[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```console') continue;
    const command = /^\$ dpi (products|stages|identities|storages)\b([^#]*)(#.*)?$/.exec(lines[i + 1] ?? '');
    let end = i + 1;
    while (end < lines.length && lines[end].trim() !== '```') end++;
    // A transcript of several commands (the error cases) is not a sample of one command's output.
    const oneCommand = !lines.slice(i + 2, end).some((l) => l.startsWith('$ '));
    if (command && oneCommand) {
      out.push({
        line: i + 2,
        args: [command[1], ...command[2].trim().split(/\s+/).filter((a) => a.length > 0)],
        reads: /--reads vendor/.test(command[3] ?? '') ? 'vendor' : 'minimal',
        output: lines.slice(i + 2, end).join('\n'),
      });
    }
    i = end;
  }
  return out;
}

describe('the lookup samples of docs/cli.md', () => {
  const emulators = new Map<ReadMode, RunningEmulator>();
  beforeAll(async () => {
    for (const reads of ['minimal', 'vendor'] as const) emulators.set(reads, await startEmulator({ host: '127.0.0.1', port: 0, reads }));
  });
  afterAll(async () => {
    for (const e of emulators.values()) await e.stop();
  });

  test('the doc has a sample of each lookup command, and identities and storages in both read modes', () => {
    const found = samples().map((s) => `${s.args[0]} ${s.reads}`);
    for (const expected of ['products minimal', 'stages minimal', 'identities minimal', 'identities vendor', 'storages minimal', 'storages vendor']) {
      expect(found).toContain(expected);
    }
  });

  test.each(samples().map((s) => [`docs/cli.md:${s.line} dpi ${s.args.join(' ')} (${s.reads} reads)`, s] as const))('%s is what dpi prints', async (_name, s) => {
    const run = await dpi(s.args, { emu: emulators.get(s.reads)! });
    expect(run.code).toBe(0);
    const printed = run.stdout.split('\n').map((l) => l.trimEnd()).join('\n').trimEnd();
    expect(printed).toBe(s.output.split('\n').map((l) => l.trimEnd()).join('\n').trimEnd());
  });
});
