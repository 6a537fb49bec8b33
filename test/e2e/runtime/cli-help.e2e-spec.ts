import { ALL_PROJECTIONS } from '@deals/runtime';
import { join, relative } from 'node:path';
import { runCli } from '../../support/api-harness';
import { compiledEntry } from '../../support/compiled-service';
import { tempDir } from '../../support/temp-dir';

describe("the operator CLI's help", () => {
  // Each call starts the CLI in a process of its own.
  jest.setTimeout(120_000);
  const dir = tempDir('cli-help');
  afterAll(() => dir.remove());

  it('names the program as the user started it: `npm run cli --`, or node and the script', async () => {
    const throughNpm = await runCli(dir.path, ['--help'], { npm_lifecycle_event: 'cli' });
    expect(throughNpm.code).toBe(0);
    expect(throughNpm.stdout).toMatch(/^Usage: npm run cli -- \[options\] \[command\]$/m);
    expect(throughNpm.stdout).toContain('projections:rebuild [options] [names...]');
    const throughNode = await runCli(dir.path, ['projections:rebuild', '--help'], { npm_lifecycle_event: '' });
    const script = relative(join(__dirname, '..', '..', '..'), compiledEntry('apps/cli/src/main.ts'));
    expect(throughNode.stdout.split('\n')).toContain(`Usage: node ${script} projections:rebuild [options] [names...]`);
  });

  it('lists the view names projections:rebuild accepts: every registered projection', async () => {
    const help = await runCli(dir.path, ['projections:rebuild', '--help']);
    expect(help.code).toBe(0);
    const listed = help.stdout
      .slice(help.stdout.indexOf('\nViews:\n') + '\nViews:\n'.length)
      .trim()
      .split(/\s+/);
    expect(listed).toEqual(ALL_PROJECTIONS.map((p) => p.name));
  });

  it('answers an unknown command with the commands it may mean: those it names a part of, else the nearest spelling', async () => {
    const part = await runCli(dir.path, ['status']);
    expect(part.code).toBe(1);
    expect(part.stderr).toContain("error: unknown command 'status'\n(Did you mean projections:status?)");
    const parts = await runCli(dir.path, ['erase']);
    expect(parts.stderr).toContain('(Did you mean users:erase, resellers:erase-buyer?)');
    const misspelt = await runCli(dir.path, ['projection:status']);
    expect(misspelt.code).toBe(1);
    expect(misspelt.stderr).toContain('(Did you mean projections:status?)');
    const nothing = await runCli(dir.path, ['zz']);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr.trim()).toBe("error: unknown command 'zz'");
  });
});
