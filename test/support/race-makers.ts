import { fork } from 'node:child_process';
import { join } from 'node:path';
import type { MakerOrder } from './data-folder-maker.fixture';

const ROOT = join(__dirname, '..', '..');
const FIXTURE = join(__dirname, 'data-folder-maker.fixture.ts');

/**
 * Forks `count` processes of the data-folder maker fixture, waits until all have loaded, then gives
 * them the same order at once; resolves with what each made (it rejects when one fails).
 */
export async function raceMakers(count: number, order: MakerOrder): Promise<string[]> {
  const children = Array.from({ length: count }, () =>
    fork(FIXTURE, [], { cwd: ROOT, execArgv: ['-r', '@swc-node/register'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }),
  );
  const loaded = children.map(
    (child) =>
      new Promise<void>((resolve, reject) => {
        child.once('message', () => resolve());
        child.once('exit', (code) => reject(new Error(`a maker exited with ${code} before loading`)));
      }),
  );
  try {
    await Promise.all(loaded);
  } catch (error) {
    for (const child of children) child.kill();
    throw error;
  }
  const answers = children.map(
    (child) =>
      new Promise<string>((resolve, reject) => {
        child.once('message', (answer: { made?: string; error?: string }) =>
          answer.made === undefined ? reject(new Error(answer.error)) : resolve(answer.made),
        );
        child.once('exit', (code) => reject(new Error(`a maker exited with ${code} without answering`)));
      }),
  );
  for (const child of children) child.send(order);
  return Promise.all(answers);
}
