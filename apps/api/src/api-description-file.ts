import { loadServiceConfig } from '@deals/runtime';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeApi } from './api-description';
import { startApi } from './bootstrap';

/** The server the checked-in description names: an installation's own host goes in `host`. */
export const FILE_SERVER = {
  url: 'https://{host}',
  description: 'the installation of the service you were given (the self-signed default: localhost:3000)',
  variables: { host: { default: 'localhost:3000', description: 'host and port of the installation' } },
};

/** The file `npm run openapi` writes and CI compares with what the service serves. */
export const API_DESCRIPTION_FILE = join(__dirname, '..', '..', '..', 'openapi.json');

/**
 * The API description as `openapi.json` holds it: the served one (describeApi over the real
 * application, started on an empty data folder and closed again), naming {@link FILE_SERVER}
 * instead of the address one installation serves it at.
 */
export async function buildApiDescriptionFile(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'deals-openapi-'));
  const config = loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', DEMO_DATA: 'off', LOG_LEVEL: 'silent' });
  const running = await startApi({ config });
  try {
    const document = describeApi(running.app, FILE_SERVER.url);
    document.servers = [FILE_SERVER];
    return `${JSON.stringify(document, null, 2)}\n`;
  } finally {
    await running.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
