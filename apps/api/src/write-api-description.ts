import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { API_DESCRIPTION_FILE, buildApiDescriptionFile } from './api-description-file';

/**
 * `npm run openapi`: writes the API description to openapi.json. With `--check`, writes nothing and
 * fails when the file differs from what the service serves.
 */
async function main(): Promise<void> {
  const text = await buildApiDescriptionFile();
  const name = relative(process.cwd(), API_DESCRIPTION_FILE);
  if (!process.argv.includes('--check')) {
    writeFileSync(API_DESCRIPTION_FILE, text);
    console.log(`wrote ${name}`);
    return;
  }
  let current = '';
  try {
    current = readFileSync(API_DESCRIPTION_FILE, 'utf8');
  } catch {
    // No file yet: it differs.
  }
  if (current !== text) {
    console.error(`${name} is not the description the service serves: run \`npm run openapi\` and commit it`);
    process.exitCode = 1;
  } else console.log(`${name} is current`);
}

void main().then(
  () => process.exit(),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
