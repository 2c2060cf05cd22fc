/**
 * The service's error text reaches the terminal without control characters: an ESC sequence in an error detail cannot
 * clear the screen, retitle the terminal or forge a line (nor can a value the user passed, echoed in a message).
 */
import { dpi, fault, testNoSecretsPrinted, useCliEmulator } from './helpers';
import { printable } from '../../src/cli/errors';
import { RunningEmulator } from '../../src/emulator';

let emu: RunningEmulator;
useCliEmulator((e) => {
  emu = e;
}, { resetEach: true });
let vendor: RunningEmulator;
useCliEmulator((e) => {
  vendor = e;
}, { reads: 'vendor' });

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const HOSTILE = 'gone\u001b[2J\u001b]0;owned\u0007\rdpi: all good\u009b31m';

test('an error detail with ESC, BEL, CR and C1 controls is printed as plain text', async () => {
  await fault(emu, { method: 'GET', pathPrefix: '/', status: 404, count: 20, body: { errors: [{ status: '404', detail: HOSTILE }] } });
  const r = await dpi(['products'], { emu });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('gone [2J ]0;owned  dpi: all good 31m');
  expect(r.stderr).not.toMatch(CONTROL);
  expect(r.stderr.split('\n').filter((l) => l !== '')).toHaveLength(1);
});

test('a value of the user echoed in a message is printed as plain text too', async () => {
  const r = await dpi(['import', '--class-name', 'X\u001b[31m'], { emu });
  expect(r.code).toBe(2);
  expect(r.stderr).toBe('dpi: --class-name \'X [31m\' is not a class name; use letters, digits and _ starting with a capital letter\n');
});

test('a note of dpi import about a failed read is printed as plain text (a C1 CSI survives JSON.stringify)', async () => {
  await fault(vendor, { method: 'GET', pathPrefix: '/v2/spp/bulk', status: 200, body: { data: '\u009b2J\u001b[2J' } });
  const r = await dpi(['import', '--skip-pipelines'], { emu: vendor });
  expect(r.code).toBe(0);
  expect(r.stderr).toContain('note: the stored product parameters could not be read (unexpected response: expected a list, got ');
  expect(r.stderr).not.toMatch(CONTROL);
});

test('printable keeps tabs and line feeds, replaces every other control character', () => {
  expect(printable('a\tb\nc\u0000d\u001be\u007ff\u0085g\u009bh\ri')).toBe('a\tb\nc d e f g h i');
  expect(printable('Ünïcödé \u2028 text')).toBe('Ünïcödé \u2028 text');
});

test('more runs (for the no-secrets check)', async () => {
  for (let i = 0; i < 4; i++) expect((await dpi(['products', '--json'], { emu })).code).toBe(0);
});

testNoSecretsPrinted();
