#!/usr/bin/env node
// `npm run client`: generates the TypeScript client's types (clients/typescript/src/schema.ts) from
// openapi.json with openapi-typescript; `node scripts/generate-client.js <folder>` writes them into
// <folder> instead (the test that checks clients/ is current). The named schemas become root types
// (`Coupon`, `DealV3`, ...); keys are sorted so that the file changes only when the description does.
const { spawnSync } = require('node:child_process');
const { dirname, join } = require('node:path');

const root = join(__dirname, '..');
const folder = process.argv[2] ?? join(root, 'clients', 'typescript', 'src');
// The package's exports hide its bin: take it beside its package.json.
const cli = join(dirname(require.resolve('openapi-typescript/package.json', { paths: [root] })), 'bin', 'cli.js');
const args = [join(root, 'openapi.json'), '--output', join(folder, 'schema.ts'), '--root-types', '--root-types-no-schema-prefix', '--alphabetize'];
const result = spawnSync(process.execPath, [cli, ...args], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
process.exit(result.status ?? 1);
