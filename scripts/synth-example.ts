/**
 * Synthesizes the example app in-process: `ts-node --transpile-only scripts/synth-example.ts <outdir> [key=value ...]`.
 */
import { buildExampleApp } from '../examples/app';

const [outdir, ...pairs] = process.argv.slice(2);
const context: Record<string, string> = {};
for (const p of pairs) {
  const i = p.indexOf('=');
  if (i > 0) context[p.slice(0, i)] = p.slice(i + 1);
}
buildExampleApp({ outdir: outdir ?? 'cdk.out', context }).synth();
