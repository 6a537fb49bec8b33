import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const REPOSITORY = join(__dirname, '..', '..');
const EXAMPLE = join(REPOSITORY, 'clients', 'typescript', 'examples', 'quickstart.ts');

/** The lines between the example's `#region README` and `#endregion README`, less their common indent. */
function exampleRegion(): string {
  const lines = readFileSync(EXAMPLE, 'utf8').split('\n');
  const start = lines.findIndex((line) => line.includes('#region README'));
  const end = lines.findIndex((line) => line.includes('#endregion README'));
  expect(start).toBeGreaterThan(-1);
  expect(end).toBeGreaterThan(start);
  const region = lines.slice(start + 1, end);
  const indent = Math.min(...region.filter((line) => line.trim()).map((line) => /^ */.exec(line)![0].length));
  return region.map((line) => line.slice(indent)).join('\n');
}

describe("the README's quick start", () => {
  it("shows the example file's lines exactly as the file has them", () => {
    const readme = readFileSync(join(REPOSITORY, 'README.md'), 'utf8');
    const block = /```ts\n([\s\S]*?)\n```/.exec(readme)?.[1];
    expect(block).toBe(exampleRegion());
  });
});
