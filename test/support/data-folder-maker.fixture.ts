/**
 * A process that makes, on its first message, what a starting service process makes once in its
 * data folder (`tls`: the self-signed certificate; `secret`: an installation secret), answers with
 * it and exits. Forked several at a time by the specs of those makers, each told to go only once
 * all are loaded, so that they race.
 */
// The modules themselves, not their library's index: each of the racing processes loads only what it runs.
import { installationSecret } from '@deals/runtime/installation-secret';
import { loadServiceConfig } from '@deals/runtime/service-config';
import { tlsMaterial } from '../../apps/api/src/tls-material';

export type MakerOrder = { make: 'tls'; dataDir: string } | { make: 'secret'; dataDir: string; name: string };

async function make(order: MakerOrder): Promise<string> {
  if (order.make === 'secret') return installationSecret(order.dataDir, order.name).toString('hex');
  const { cert, key } = await tlsMaterial(loadServiceConfig({ DATA_DIR: order.dataDir }));
  return JSON.stringify({ cert, key });
}

process.once('message', (order: MakerOrder) => {
  make(order).then(
    (made) => process.send!({ made }, () => process.exit(0)),
    (error: unknown) => process.send!({ error: String(error) }, () => process.exit(1)),
  );
});
process.send!('loaded');
