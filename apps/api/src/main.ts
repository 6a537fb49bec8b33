import 'reflect-metadata';
import { loadServiceConfig } from '@deals/runtime';
import { startApi } from './bootstrap';

async function main() {
  const config = loadServiceConfig();
  const api = await startApi({ config });
  api.app.enableShutdownHooks();
  process.stdout.write(`deals API listening on https://localhost:${api.port} (data in ${config.dataDir})\n`);
}

main().catch((error) => {
  process.stderr.write(`the deals API could not start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
