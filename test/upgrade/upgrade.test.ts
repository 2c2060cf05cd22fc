/**
 * Upgrade safety (CONTRIBUTING.md, "Releasing"): from the kept templates of each release (test/upgrade/releases/) to
 * the current code's, `dpi plan`'s own comparison must not rebuild, replace or delete a service record, nor plan a
 * change the handler refuses, unless a CHANGELOG.md entry of a later version (or Unreleased) names that action and
 * resource type (`upgrade: <action> <type> [<target>]`, test/upgrade/changelog.ts).
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyKept, KEPT_APPS, KeptApp, keepAssembly, keptReleases, RELEASES_DIR, synthKeptApp } from './apps';
import { allowancesSince, parseAllowances } from './changelog';
import { describe as describeFinding, findings, planUpgrade } from './check';

const CHANGELOG = join(__dirname, '..', '..', 'CHANGELOG.md');
const releases = keptReleases();
const current: Partial<Record<KeptApp, string>> = {};

/** The current code's kept form of `app` (synthesized once per file). */
function currentApp(app: KeptApp): string {
  if (current[app] === undefined) {
    const work = mkdtempSync(join(tmpdir(), `upgrade-${app}-`));
    synthKeptApp(app, join(work, 'raw'));
    keepAssembly(join(work, 'raw'), join(work, 'kept'));
    current[app] = join(work, 'kept');
  }
  return current[app]!;
}

const dpiCount = (dir: string): number => readdirTemplates(dir)
  .reduce((n, t) => n + Object.values(t.Resources ?? {}).filter((r) => r.Type.startsWith('Custom::Dpi')).length, 0);

type T = { Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }> };
function readdirTemplates(dir: string): T[] {
  return readdirSync(dir).filter((f) => f.endsWith('.template.json')).map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as T);
}

test('the templates of at least one release are kept, each with both apps', () => {
  expect(releases.length).toBeGreaterThan(0);
  for (const r of releases) for (const app of KEPT_APPS) expect(dpiCount(join(RELEASES_DIR, r, app))).toBeGreaterThan(0);
});

test('CHANGELOG.md has an Unreleased section and its upgrade markers parse', () => {
  const text = readFileSync(CHANGELOG, 'utf8');
  expect(text).toMatch(/^## \[?Unreleased\]?/m);
  expect(() => parseAllowances(text)).not.toThrow();
});

describe.each(releases)('upgrade from release %s', (release) => {
  test.each([...KEPT_APPS])('the %s app: no unnamed rebuild, replace, delete or refused change', async (app) => {
    const kept = join(RELEASES_DIR, release, app);
    const entries = await planUpgrade(kept, currentApp(app));
    // Every kept service record is planned (the comparison is not vacuous).
    expect(entries.length).toBeGreaterThanOrEqual(dpiCount(kept));
    const allowances = allowancesSince(parseAllowances(readFileSync(CHANGELOG, 'utf8')), release);
    const refused = findings(entries, allowances).filter((f) => !f.allowedBy).map(describeFinding);
    expect(refused).toEqual([]);
  });
});

/** The service token of every custom resource of a kept assembly, by template file and logical ID. */
function serviceTokens(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.template.json'))) {
    const t = JSON.parse(readFileSync(join(dir, f), 'utf8')) as T;
    for (const [id, r] of Object.entries(t.Resources ?? {})) {
      if (r.Type.startsWith('Custom::Dpi')) out.set(`${f}/${id}`, JSON.stringify(r.Properties?.ServiceToken));
    }
  }
  return out;
}

describe.each(releases)('service tokens since release %s', (release) => {
  // CloudFormation refuses to change a custom resource's ServiceToken ("Modifying service token is not allowed").
  test.each([...KEPT_APPS])('the %s app: every kept resource keeps its service token', (app) => {
    const kept = serviceTokens(join(RELEASES_DIR, release, app));
    const now = serviceTokens(currentApp(app));
    const compared = [...kept.keys()].filter((k) => now.has(k));
    expect(compared.length).toBeGreaterThan(0);
    for (const k of compared) expect(`${k}: ${now.get(k)}`).toBe(`${k}: ${kept.get(k)}`);
  });
});

describe('the check fails on a doctored kept release', () => {
  const newest = releases[releases.length - 1];

  /** The kept `app` of the newest release, copied, with `edit` applied to its template `file`. */
  function doctored(app: KeptApp, file: string, edit: (t: T) => void): string {
    const dir = join(mkdtempSync(join(tmpdir(), 'doctored-')), app);
    copyKept(join(RELEASES_DIR, newest, app), dir);
    const t = JSON.parse(readFileSync(join(dir, file), 'utf8')) as T;
    edit(t);
    writeFileSync(join(dir, file), JSON.stringify(t));
    return dir;
  }
  const changelog = (body: string): string => `# Changelog\n\nFormat: see the top.\n\n## Unreleased\n\n${body}\n\n## ${newest}\n\n- first kept release\n`;

  // The vendor pipeline deployed for remote identity 364; the current code declares 363: the handler replaces it.
  const replaced = (): string => doctored('example', 'MarketplaceData.template.json', (t) => {
    t.Resources!.VendorNotifications27B112BB.Properties!.RemoteIdentityId = '364';
  });

  test('a replace no CHANGELOG entry names fails, naming the resource and the change', async () => {
    const entries = await planUpgrade(replaced(), currentApp('example'));
    const refused = findings(entries, allowancesSince(parseAllowances(changelog('- a fix')), newest)).filter((f) => !f.allowedBy);
    expect(refused.map(describeFinding)).toEqual([
      expect.stringMatching(/^replace Custom::DpiNotificationPipeline MarketplaceData\/VendorNotifications .*remoteIdentityId: "364" -> "363"/),
    ]);
  });

  test('the same replace passes when Unreleased names it, not when only the kept release or another type does', async () => {
    const entries = await planUpgrade(replaced(), currentApp('example'));
    const refusedWith = (text: string): number =>
      findings(entries, allowancesSince(parseAllowances(text), newest)).filter((f) => !f.allowedBy).length;
    expect(refusedWith(changelog('### Breaking changes\n\n- `upgrade: replace Custom::DpiNotificationPipeline VendorNotifications` new identity'))).toBe(0);
    expect(refusedWith(changelog('- `upgrade: replace Custom::DpiNotificationPipeline`'))).toBe(0);
    expect(refusedWith(changelog('- `upgrade: replace Custom::DpiSubscription`'))).toBe(1);
    expect(refusedWith(changelog('- `upgrade: rebuild Custom::DpiNotificationPipeline`'))).toBe(1);
    expect(refusedWith(changelog('- `upgrade: replace Custom::DpiNotificationPipeline SellerNotifications`'))).toBe(1);
    // Named in the kept release's own section: that release was already deployed with it.
    expect(refusedWith(`## Unreleased\n\n## ${newest}\n\n- \`upgrade: replace Custom::DpiNotificationPipeline\`\n`)).toBe(1);
  });

  test('a service record the current code no longer declares is a delete unless named', async () => {
    const dir = doctored('example', 'MarketplaceData.template.json', (t) => {
      t.Resources!.OldOrders = JSON.parse(JSON.stringify(t.Resources!.OrdersA9B65338)) as { Type: string };
      t.Resources!.OldOrders.Properties!.Name = 'orders-old';
    });
    const entries = await planUpgrade(dir, currentApp('example'));
    const refused = findings(entries, allowancesSince(parseAllowances(changelog('')), newest)).filter((f) => !f.allowedBy);
    expect(refused.map((f) => `${f.action} ${f.entry.logicalId}`)).toEqual(['delete OldOrders']);
    const named = findings(entries, allowancesSince(parseAllowances(changelog('- `upgrade: delete Custom::DpiSubscription OldOrders`')), newest));
    expect(named.filter((f) => !f.allowedBy)).toEqual([]);
  });

  test('a pipeline in a nested stack of the fleet is compared too', async () => {
    const file = readdirSync(join(RELEASES_DIR, newest, 'fleet')).find((f) => f.endsWith('.nested.template.json'))!;
    let doctoredId = '';
    const dir = doctored('fleet', file, (t) => {
      const [id, r] = Object.entries(t.Resources!).find(([, x]) => x.Type === 'Custom::DpiNotificationPipeline')!;
      doctoredId = id;
      r.Properties!.AccountType = r.Properties!.AccountType === 'seller' ? 'vendor' : 'seller';
    });
    const entries = await planUpgrade(dir, currentApp('fleet'));
    const refused = findings(entries, allowancesSince(parseAllowances(changelog('')), newest)).filter((f) => !f.allowedBy);
    expect(refused.map((f) => [f.action, f.entry.logicalId, f.entry.constructPath])).toEqual([
      [expect.stringMatching(/^(replace|failure)$/), doctoredId, expect.stringMatching(/^Fleet\/Sellers\//)],
    ]);
    const named = (body: string): number =>
      findings(entries, allowancesSince(parseAllowances(changelog(body)), newest)).filter((f) => !f.allowedBy).length;
    expect(named(`- \`upgrade: ${refused[0].action} Custom::DpiNotificationPipeline Fleet/Sellers\``)).toBe(0);
  });

  test('markers: versions, targets, fenced examples; an unknown action or type is an error naming its line', () => {
    expect(() => parseAllowances('## Unreleased\n- `upgrade: destroy Custom::DpiSubscription`\n')).toThrow(/line 2: 'upgrade: destroy'/);
    expect(() => parseAllowances('## Unreleased\n\n- `upgrade: replace AWS::SQS::Queue`\n')).toThrow(/line 3: 'AWS::SQS::Queue'/);
    // Examples of the format: before the first version's heading, or in a fenced block.
    expect(parseAllowances('- `upgrade: replace Custom::DpiSubscription`\n## Unreleased\n```\n- `upgrade: delete Custom::DpiSubscription`\n```\n')).toEqual([]);
    expect(parseAllowances('## [1.2.0] - 2027-01-04\n* fix `upgrade: failure Custom::DpiSubscription Orders`\n')).toEqual([
      { version: '1.2.0', action: 'failure', type: 'Custom::DpiSubscription', target: 'Orders', line: 2 },
    ]);
  });
});
