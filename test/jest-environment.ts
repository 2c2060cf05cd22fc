import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { TestEnvironment } from 'jest-environment-node';

/**
 * The tiers' jest environment (package.json `jest.projects[].testEnvironment`, from .projenrc.ts): node's, with a
 * temporary directory of its own for each test file. `TMPDIR` points there while the file runs, so what the suite and
 * the libraries it calls create with `os.tmpdir()` (every `new App()` without an outdir makes a `cdk.out*` directory;
 * emulators, journals and packed apps make theirs) goes with it when the file ends, whether its own clean-up ran or not.
 */
export default class TempDirEnvironment extends TestEnvironment {
  private dir?: string;
  private previous?: string;

  async setup(): Promise<void> {
    await super.setup();
    this.previous = process.env.TMPDIR;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dpi-test-'));
    process.env.TMPDIR = this.dir;
  }

  async teardown(): Promise<void> {
    if (this.previous === undefined) delete process.env.TMPDIR; else process.env.TMPDIR = this.previous;
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 });
    await super.teardown();
  }
}
