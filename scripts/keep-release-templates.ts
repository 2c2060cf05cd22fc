/**
 * Keeps the templates of a release for the upgrade test (test/upgrade/upgrade.test.ts; CONTRIBUTING.md, "Releasing"):
 * `npx projen keep-release-templates [version]` synthesizes the example app and the 20-identity fleet app with the
 * current sources and writes them, normalized (test/upgrade/apps.ts), to `test/upgrade/releases/<version>/`.
 *
 * The version: the argument, else the newest release tag on this commit's history (`v1.2.3` or `1.2.3`), else
 * package.json's `version` (0.0.0 before the first release: projen's release sets the version from the tags).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RELEASES_DIR, writeKeptApps } from '../test/upgrade/apps';

function releaseVersion(arg: string | undefined): string {
  if (arg !== undefined) return arg.replace(/^v/, '');
  try {
    const tag = execFileSync('git', ['describe', '--tags', '--abbrev=0', '--match', '*[0-9]*.[0-9]*.[0-9]*'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (tag !== '') return tag.replace(/^v/, '');
  } catch {
    // no release tag yet
  }
  return (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
}

const version = releaseVersion(process.argv[2]);
if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
  process.stderr.write(`keep-release-templates: '${version}' is not a release version (x.y.z)\n`);
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), 'dpi-keep-'));
try {
  const dir = join(RELEASES_DIR, version);
  const files = writeKeptApps(dir, work);
  for (const [app, names] of Object.entries(files)) process.stdout.write(`${dir}/${app}: ${names.length} files\n`);
  process.stdout.write(`commit ${dir} with the release (git add ${join('test', 'upgrade', 'releases', version)})\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
