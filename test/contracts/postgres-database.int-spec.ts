import { DatabaseMissingError, ensurePostgresDatabase } from '@deals/adapters';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Client } from 'pg';
import { asAdmin, POSTGRES_ADMIN_URL, postgresUnavailableSync } from '../support/postgres';

const unavailable = postgresUnavailableSync();

const exists = (name: string) =>
  asAdmin(async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1);

const urlOf = (name: string, user?: string) => {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  if (user) url.username = user;
  return url.toString();
};

if (unavailable) {
  describe.skip(`the PostgreSQL database made at a first start — skipped: ${unavailable}`, () => {
    it('needs PostgreSQL', () => undefined);
  });
} else {
  describe('the PostgreSQL database made at a first start (ensurePostgresDatabase)', () => {
    const made: string[] = [];
    const roles: string[] = [];
    const fresh = () => {
      const name = `deals_made_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      made.push(name);
      return name;
    };

    afterAll(async () => {
      await asAdmin(async (c) => {
        for (const name of made) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        for (const role of roles) await c.query(`DROP ROLE IF EXISTS ${role}`);
      });
    });

    it('makes a database that does not exist, then finds it there', async () => {
      const name = fresh();
      expect(await ensurePostgresDatabase(urlOf(name))).toBe('created');
      expect(await exists(name)).toBe(true);
      expect(await ensurePostgresDatabase(urlOf(name))).toBe('existed');
    });

    it('makes it once when several processes start together', async () => {
      const name = fresh();
      const outcomes = await Promise.all(Array.from({ length: 4 }, () => ensurePostgresDatabase(urlOf(name))));
      expect(outcomes.filter((o) => o === 'created').length).toBeLessThanOrEqual(1);
      expect(await exists(name)).toBe(true);
    });

    it('keeps a name that needs quoting as it is written', async () => {
      const name = fresh().replace('deals_made_', 'Deals-Made ');
      made.push(`"${name}"`);
      expect(await ensurePostgresDatabase(urlOf(encodeURIComponent(name)))).toBe('created');
      expect(await exists(name)).toBe(true);
    });

    it('makes the database the driver then connects to: a name with escapes, a socket path in host=', async () => {
      const escaped = `${fresh()}%231`;
      made.push(`"${decodeURI(escaped)}"`);
      expect(await ensurePostgresDatabase(urlOf(escaped))).toBe('created');
      const reached = new Client({ connectionString: urlOf(escaped) });
      await reached.connect();
      await reached.end();
      if (existsSync('/var/run/postgresql/.s.PGSQL.5432')) {
        const name = fresh();
        const socket = `postgres://postgres@/${name}?host=/var/run/postgresql`;
        expect(await ensurePostgresDatabase(socket)).toBe('created');
        expect(await ensurePostgresDatabase(socket)).toBe('existed');
      }
    });

    it('leaves a URL the driver cannot read to the adapters', async () => {
      expect(await ensurePostgresDatabase('postgres://[::1')).toBe('unanswered');
    });

    it('stops the start with what to run when the role may not make databases', async () => {
      const role = `deals_nocreate_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
      roles.push(role);
      await asAdmin((c) => c.query(`CREATE ROLE ${role} LOGIN NOCREATEDB`));
      const name = fresh();
      const started = ensurePostgresDatabase(urlOf(name, role));
      await expect(started).rejects.toBeInstanceOf(DatabaseMissingError);
      await expect(started).rejects.toThrow(`the database "${name}" of DATABASE_URL does not exist and ${role} may not create databases`);
      await expect(started).rejects.toThrow(`createdb ${name}`);
      expect(await exists(name)).toBe(false);
    });

    it('leaves a server that does not answer to the adapters', async () => {
      expect(await ensurePostgresDatabase('postgres://postgres@127.0.0.1:1/nowhere')).toBe('unanswered');
    });
  });
}
