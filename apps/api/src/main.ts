import 'reflect-metadata';
import { loadServiceConfig } from '@deals/runtime';
import { Logger } from 'nestjs-pino';
import { startApi } from './bootstrap';

async function main() {
  const config = loadServiceConfig();
  const api = await startApi({ config });
  api.app.enableShutdownHooks();
  // A log line like every other line of the service's output: stdout holds JSON lines only.
  api.app.get(Logger).log(`deals API listening on https://localhost:${api.port} (data in ${config.dataDir})`);
}

main().catch((error) => {
  process.stderr.write(`the deals API could not start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
