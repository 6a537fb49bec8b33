import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir';

const DESCRIPTION = join(__dirname, '..', '..', 'openapi.json');
/** The generators and what their output needs, at versions that run on Node 20 (newer ones ask for 22). */
const PACKAGES = [
  'typescript@5.9.3',
  '@types/node@20',
  'axios@1.21.1',
  '@hey-api/openapi-ts@0.95.0',
  'swagger-typescript-api@13.13.0',
  'openapi-typescript-codegen@0.31.0',
  'orval@7.13.2',
  // orval 7.13's axios client types its calls as axios 1.12 did (later versions type `axios.get`'s answer otherwise).
  'axios-1.12@npm:axios@1.12.2',
];

/**
 * Each generator's command (run with npx in the folder), its output folder, the DOM libraries its
 * code uses, and where its imports are found when not in the folder's node_modules by their name.
 */
const GENERATORS: Array<{ name: string; args: string[]; out: string; lib: string[]; paths?: Record<string, string[]> }> = [
  {
    name: '@hey-api/openapi-ts (fetch client)',
    args: ['openapi-ts', '-i', DESCRIPTION, '-o', 'gen/heyapi', '-c', '@hey-api/client-fetch', '--no-log-file', '-s'],
    out: 'gen/heyapi',
    lib: ['es2022', 'dom', 'dom.iterable'],
  },
  {
    name: 'swagger-typescript-api (fetch)',
    args: ['swagger-typescript-api', 'generate', '-p', DESCRIPTION, '-o', 'gen/sta-fetch', '-n', 'api.ts', '--silent'],
    out: 'gen/sta-fetch',
    lib: ['es2022', 'dom'],
  },
  {
    name: 'swagger-typescript-api (axios)',
    args: ['swagger-typescript-api', 'generate', '-p', DESCRIPTION, '-o', 'gen/sta-axios', '-n', 'api.ts', '--axios', '--silent'],
    out: 'gen/sta-axios',
    lib: ['es2022', 'dom'],
  },
  {
    name: 'openapi-typescript-codegen (fetch)',
    args: ['openapi', '-i', DESCRIPTION, '-o', 'gen/otc-fetch', '-c', 'fetch'],
    out: 'gen/otc-fetch',
    lib: ['es2022', 'dom'],
  },
  {
    name: 'openapi-typescript-codegen (axios)',
    args: ['openapi', '-i', DESCRIPTION, '-o', 'gen/otc-axios', '-c', 'axios'],
    out: 'gen/otc-axios',
    lib: ['es2022', 'dom'],
  },
  {
    name: 'orval (fetch)',
    args: ['orval', '-i', DESCRIPTION, '-o', 'gen/orval-fetch/api.ts', '--client', 'fetch'],
    out: 'gen/orval-fetch',
    lib: ['es2022', 'dom', 'dom.iterable'],
  },
  {
    name: 'orval (axios)',
    args: ['orval', '-i', DESCRIPTION, '-o', 'gen/orval-axios/api.ts', '--client', 'axios'],
    out: 'gen/orval-axios',
    lib: ['es2022', 'dom'],
    paths: { axios: ['./node_modules/axios-1.12'] },
  },
];

function run(command: string, args: string[], cwd: string, timeoutMs = 5 * 60_000): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, timeout: timeoutMs, maxBuffer: 64 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

/**
 * The API description as partners use it: clients generated from openapi.json by widely used
 * generators other than the project's own (clients/typescript) compile under `tsc --strict`, with
 * the libraries' own declarations checked too.
 */
describe('clients generated from openapi.json by other generators', () => {
  jest.setTimeout(10 * 60_000);
  const dir = tempDir('generators');
  afterAll(() => dir.remove());

  beforeAll(async () => {
    writeFileSync(join(dir.path, 'package.json'), '{ "private": true }\n');
    const installed = await run('npm', ['install', '--no-audit', '--no-fund', ...PACKAGES], dir.path);
    if (installed.code !== 0) throw new Error(`npm install of the generators failed:\n${installed.output.slice(-3000)}`);
  });

  it.each(GENERATORS)('$name: generates a client that compiles under tsc --strict', async ({ args, out, lib, paths }) => {
    const generated = await run('npx', ['--no-install', ...args], dir.path);
    if (generated.code !== 0) throw new Error(`generation failed:\n${generated.output.slice(-3000)}`);
    const tsconfig = `tsconfig.${out.replace(/\W/g, '_')}.json`;
    const compilerOptions = {
      strict: true,
      noEmit: true,
      target: 'es2022',
      module: 'nodenext',
      moduleResolution: 'nodenext',
      lib,
      skipLibCheck: false,
      types: [],
      ...(paths ? { paths } : {}),
    };
    writeFileSync(join(dir.path, tsconfig), JSON.stringify({ compilerOptions, include: [`${out}/**/*.ts`] }));
    const compiled = await run('npx', ['--no-install', 'tsc', '-p', tsconfig], dir.path);
    expect(compiled.output.split('\n').slice(0, 30).join('\n')).toBe('');
    expect(compiled.code).toBe(0);
  });
});
