/**
 * One question on the terminal (stderr), its answer read from stdin: the confirmation of `dpi orphans --fix` and
 * `dpi drift --fix`. readline is loaded only when a question is asked (not at the start-up of every command).
 */
export function askOnStdin(question: string): Promise<string> {
  return new Promise((resolve) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { createInterface } = require('node:readline') as typeof import('node:readline');
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    rl.question(question, (answer) => {
      rl.close();
      resolve(answer);
    });
  });
}
