import Database from 'better-sqlite3';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { ApiProcess, freePort } from '../../support/api-process';
import { tempDir } from '../../support/temp-dir';

/** The certificate a server presents, to a client that trusts only the given one (so the handshake fails otherwise). */
function servedCertificate(port: number, trusted: string): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca: trusted, servername: 'localhost' }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.end();
      resolve(new X509Certificate(raw));
    });
    socket.once('error', reject);
  });
}

/** Two API processes started at once on one fresh data folder: what each writes there once, it writes once for both. */
describe('two API processes started together on one fresh data folder', () => {
  const dir = tempDir('shared-folder');
  let apis: ApiProcess[] = [];

  beforeAll(async () => {
    const ports = [await freePort(), await freePort()];
    // One keeps the views (the embedded API, one per folder); the other serves beside it.
    apis = await Promise.all([
      ApiProcess.start(dir.path, ports[0], { DEMO_DATA: 'on' }),
      ApiProcess.start(dir.path, ports[1], { DEMO_DATA: 'on', RUN_PROJECTIONS: 'off' }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apis.map((api) => api.stop()));
    dir.remove();
  });

  it('both serve the certificate the folder holds, to a client that trusts only that one', async () => {
    const kept = readFileSync(join(dir.path, 'tls', 'self-signed.crt'), 'utf8');
    for (const api of apis) expect((await servedCertificate(api.port, kept)).fingerprint256).toBe(new X509Certificate(kept).fingerprint256);
  });

  it('the demo data are loaded once, and the demo partner in the folder is that one', () => {
    const demo = JSON.parse(readFileSync(join(dir.path, 'demo-partner.json'), 'utf8'));
    const db = new Database(join(dir.path, 'events.sqlite'), { readonly: true });
    try {
      const partners = db.prepare(`SELECT data FROM events WHERE type = 'PartnerRegistered'`).all() as Array<{ data: string }>;
      expect(partners.map((p) => JSON.parse(p.data).partnerId)).toEqual([demo.partner_id, demo.test.partner_id]);
    } finally {
      db.close();
    }
  });
});
