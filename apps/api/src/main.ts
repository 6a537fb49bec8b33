import 'reflect-metadata';
import { loadServiceConfig, startFailure } from '@deals/runtime';
import { Logger } from 'nestjs-pino';
import { startApi } from './bootstrap';

async function main() {
  const config = loadServiceConfig();
  const api = await startApi({ config });
  // SIGTERM or SIGINT: stop accepting, answer every request already received (a purchase in its
  // charge completes), for up to SHUTDOWN_GRACE_MS, then close the jobs, views, event log and every
  // adapter, and exit 0. A second signal exits at once.
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      process.stderr.write(`${signal} again: exiting now\n`);
      process.exit(1);
    }
    stopping = true;
    api.app.get(Logger).log(`${signal}: stopping (answering the requests in flight, up to ${config.shutdownGraceMs} ms)`);
    api.close(config.shutdownGraceMs).then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`the deals API did not stop cleanly: ${error instanceof Error ? error.stack : String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // A log line like every other line of the service's output: stdout holds JSON lines only.
  api.app.get(Logger).log(`deals API listening on https://localhost:${api.port} (data in ${config.dataDir})`);
}

main().catch((error) => {
  process.stderr.write(`the deals API could not start: ${startFailure(error)}\n`);
  process.exit(1);
});
