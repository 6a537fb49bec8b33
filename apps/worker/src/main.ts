import 'reflect-metadata';
import { listenForMetrics, loadServiceConfig, prepareServers, ServiceMetrics, startFailure } from '@deals/runtime';
import { ServiceLogLines } from '@deals/wire';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { WorkerModule } from './worker.module';

async function main() {
  const config = loadServiceConfig();
  const prepared = await prepareServers(config);
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { bufferLogs: true });
  app.useLogger(new ServiceLogLines(app.get(Logger)));
  if (prepared) app.get(Logger).warn(prepared);
  await app.init();
  // The worker serves no API: its metrics (projections, jobs, the process) only on METRICS_PORT.
  const metricsServer =
    config.metrics && config.metricsPort !== null ? await listenForMetrics(app.get(ServiceMetrics), config.metricsPort, config.host) : null;
  // SIGTERM or SIGINT: let the jobs under way finish, stop the projections, close every adapter, exit 0; a second signal exits at once.
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    app.get(Logger).log(`${signal}: stopping (jobs under way finish first)`);
    metricsServer?.close();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`the deals worker did not stop cleanly: ${error instanceof Error ? error.stack : String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  app.get(Logger).log(`deals worker running projections and jobs (data in ${config.dataDir})`);
}

main().catch((error) => {
  process.stderr.write(`the deals worker could not start: ${startFailure(error)}\n`);
  process.exit(1);
});
