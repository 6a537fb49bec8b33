import 'reflect-metadata';
import { loadServiceConfig } from '@deals/runtime';
import { ServiceLogLines } from '@deals/wire';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { WorkerModule } from './worker.module';

async function main() {
  const config = loadServiceConfig();
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { bufferLogs: true });
  app.useLogger(new ServiceLogLines(app.get(Logger)));
  app.enableShutdownHooks();
  await app.init();
  app.get(Logger).log(`deals worker running projections and jobs (data in ${config.dataDir})`);
}

main().catch((error) => {
  process.stderr.write(`the deals worker could not start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
