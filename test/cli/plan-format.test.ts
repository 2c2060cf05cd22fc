/**
 * The parts of `dpi plan`'s review output that need no service: the markdown escaping, the review order, the markdown
 * layout, and the live findings of a subscription from made-up listings (what the deploy does about each difference).
 */
import { parseFailOn } from '../../src/cli/commands/plan';
import { LiveRecords, liveStatusOf, minimalNote, ReviewedEntry, withLiveFindings } from '../../src/cli/commands/plan-live';
import { groupOf, md, renderPlanMarkdown, reviewOrder } from '../../src/cli/commands/plan-markdown';
import { ACTION_LABEL } from '../../src/cli/commands/plan-render';
import { planResource } from '../../src/handler/plan';
import type { PlanAction, PlanInput } from '../../src/handler/plan-types';

const entry = (path: string, action: PlanAction, more: Partial<ReviewedEntry> = {}): ReviewedEntry => ({
  type: 'Custom::DpiSubscription', stack: 'S', logicalId: path.replace(/\W/g, ''), constructPath: path, action, changes: [], calls: [], effects: [], ...more,
});

describe('--fail-on', () => {
  test('one name per action (the table\'s), destructive = rebuild, replace, delete; the old spellings still parse', () => {
    expect(parseFailOn('destructive,failure')).toEqual(['rebuild', 'replace', 'delete', 'failure']);
    expect(parseFailOn('update-in-place, no change,replace,destructive')).toEqual(['update', 'no-change', 'replace', 'rebuild', 'delete']);
    expect(() => parseFailOn('rebuilds')).toThrow("--fail-on: 'rebuilds' is not an action; use a comma-separated list of create, update, rebuild, "
      + 'replace, delete, retain, no-change, failure or destructive (rebuild, replace, delete)');
    expect(Object.entries(ACTION_LABEL).every(([action, label]) => action === label)).toBe(true);
  });
});

describe('markdown escaping', () => {
  test('every character GitHub markdown reads as syntax becomes an entity; line breaks become spaces', () => {
    expect(md('a|b `c` <script>x</script> @team *y* _z_ [l](u) \\ ~s~ #1 ![i] & \n next\r\n'))
      .toBe('a&#124;b &#96;c&#96; &lt;script&gt;x&lt;/script&gt; &#64;team &#42;y&#42; &#95;z&#95; &#91;l&#93;(u) &#92; &#126;s&#126; &#35;1 '
        + '&#33;&#91;i&#93; &amp;   next ');
  });

  test('a construct path and a value with table and tag characters keep the table and the tags intact', () => {
    const text = renderPlanMarkdown([entry('S/Evil|`<b>', 'update', {
      physicalId: '9001',
      changes: [{ prop: 'name', from: 'a|b', to: '</details><img src=x onerror=alert(1)>`x`', effect: 'update' }],
      effects: ['@everyone look'],
    })]);
    expect(text.split('\n').filter((l) => l.startsWith('|'))).toHaveLength(9);
    expect(text.split('\n').filter((l) => l.startsWith('|')).every((l) => l.split('|').length === 4)).toBe(true);
    expect(text).not.toMatch(/<img|<\/details><img|<b>`|@everyone/);
    expect(text.match(/<details>/g)).toHaveLength(1);
    expect(text.match(/<\/details>/g)).toHaveLength(1);
    expect(text).toContain('<code>S/Evil&#124;&#96;&lt;b&gt;</code>');
  });
});

describe('review order', () => {
  test('refusals first, then delete, replace, rebuild; then what undoes live state; then updates, creates, no change; else the deploy order', () => {
    const undo = { kind: 'status' as const, text: 'x', undoes: true, risk: false };
    const entries = [
      entry('S/Create', 'create'),
      entry('S/Same', 'no-change'),
      entry('S/Rebuild', 'rebuild'),
      entry('S/Update', 'update'),
      entry('S/Replace', 'replace'),
      entry('S/Reactivated', 'update', { live: [undo] }),
      entry('S/Delete', 'delete'),
      entry('S/Refused', 'update', { failure: 'no' }),
      entry('S/Update2', 'update'),
      entry('S/Possibly', 'no-change', { possibleAction: 'replace' }),
    ];
    expect(reviewOrder(entries).map((e) => e.constructPath)).toEqual([
      'S/Refused', 'S/Delete', 'S/Replace', 'S/Rebuild', 'S/Possibly', 'S/Reactivated', 'S/Update', 'S/Update2', 'S/Create', 'S/Same',
    ]);
    expect(entries.map(groupOf)).toEqual(['create', 'no-change', 'risk', 'update', 'risk', 'undo', 'risk', 'risk', 'update', 'risk']);
  });

  test('no change with a live difference gets a block of its own; the rest one folded list', () => {
    const text = renderPlanMarkdown([
      entry('S/A', 'no-change'),
      entry('S/B', 'no-change', { live: [{ kind: 'status', text: 'subscription 1 is paused in the service; it stays paused', undoes: false, risk: false }] }),
    ]);
    expect(text.split('\n')[0]).toBe('## dpi plan: 2 no-change');
    expect(text).toContain('<details><summary><b>no-change</b> <code>S/B</code> (Subscription)</summary>');
    expect(text).toContain('- **live:** subscription 1 is paused in the service; it stays paused');
    expect(text).toContain('<details><summary>1 resource with no change and no live difference</summary>\n\n- <code>S/A</code> (Subscription)\n');
  });
});

describe('live findings of a subscription', () => {
  const deployed: Record<string, unknown> = {
    ProductId: '3001',
    RemoteIdentityId: '362',
    StorageGroupId: '501',
    ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' },
    Status: 'active',
    Name: 'orders',
    OnDelete: 'invalid',
  };
  const records = (status: string | undefined, name?: string, vendor = true): LiveRecords => ({
    subscriptions: new Map(status === undefined ? [] : [['9001', vendor ? { status, name: name ?? 'orders' } : { status }]]),
    listed: new Map(),
    identities: new Map([['362', vendor ? { invalid: false } : {}]]),
    names: vendor,
    invalidity: vendor,
    requests: 2,
  });
  /** Plans one deployed subscription as dpi plan does with the listings `live`. */
  const planned = (newProps: Record<string, unknown>, live: LiveRecords): ReviewedEntry => {
    const input: PlanInput = { type: 'Custom::DpiSubscription', stack: 'S', logicalId: 'Orders', constructPath: 'S/Orders', physicalId: '9001', oldProps: deployed, newProps };
    const status = liveStatusOf(live, input);
    const e = planResource(status !== undefined ? { ...input, liveStatus: status } : input);
    return withLiveFindings([e], new Map([['S\0Orders', input]]), live)[0];
  };

  test('paused and updated: re-activated, the status in the PATCH', () => {
    const e = planned({ ...deployed, Name: 'orders-2' }, records('paused'));
    expect(e.action).toBe('update');
    expect(e.calls.map((c) => c.purpose)).toEqual(['set name, status']);
    expect(e.live).toEqual([expect.objectContaining({ kind: 'status', undoes: true })]);
    expect(e.live![0].text).toBe('subscription 9001 is paused in the service (deployed declaration: active); this deploy re-activates it (status active)');
  });

  test('paused and unchanged: CloudFormation sends no Update, so it stays paused', () => {
    const e = planned({ ...deployed }, records('paused'));
    expect(e.action).toBe('no-change');
    expect(e.live![0]).toMatchObject({ kind: 'status', undoes: false });
    expect(e.live![0].text).toContain('this deploy sends no Update for it (its properties are unchanged), so it stays paused');
  });

  test('renamed in the service: a new declared name is set; otherwise the name is not sent and the rename stays', () => {
    const renamed = planned({ ...deployed, Name: 'orders-2' }, records('active', 'from the UI'));
    expect(renamed.live).toEqual([expect.objectContaining({ kind: 'renamed', undoes: true })]);
    expect(renamed.live![0].text).toBe('subscription 9001 is named "from the UI" in the service (deployed declaration: "orders"); this deploy sets the name "orders-2"');
    const kept = planned({ ...deployed, StorageGroupId: '502' }, records('active', 'from the UI'));
    expect(kept.live![0]).toMatchObject({ kind: 'renamed', undoes: false });
    expect(kept.live![0].text).toContain('this deploy does not send the name');
  });

  test('not listed and updated: made anew (replace); cancelled and updated: the handler refuses', () => {
    const gone = planned({ ...deployed, Name: 'orders-2' }, records(undefined));
    expect(gone.action).toBe('replace');
    expect(gone.calls[0]).toMatchObject({ method: 'POST', path: '/v2/sub' });
    expect(gone.live).toEqual([expect.objectContaining({ kind: 'gone', undoes: true })]);
    const cancelled = planned({ ...deployed, Name: 'orders-2' }, records('cancelled'));
    expect(cancelled.failure).toMatch(/is cancelled and cannot become active again/);
    expect(cancelled.live![0].text).toContain('the handler refuses to make it active again: the deploy fails');
  });

  test('minimal listings: no name is compared, and the note names what was not checked', () => {
    const e = planned({ ...deployed, StorageGroupId: '502' }, records('active', undefined, false));
    expect(e.live).toBeUndefined();
    expect(minimalNote(records('active', undefined, false))).toMatch(/renames .* and invalidated identities .* were not checked/);
    expect(minimalNote(records('active'))).toBeUndefined();
  });
});
