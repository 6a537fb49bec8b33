/**
 * The conventional design the distributed bench measures the service against: a small Fastify 5
 * HTTPS server on PostgreSQL through `pg`, serving the service's stored-card purchase call the way
 * a plain CRUD service would:
 *
 *   POST /purchases?api_key=…  {deal_id, quantity, user_id, credit_card_id, expected_price_per_unit}
 *   1. the partner looked up by the SHA-256 of its api_key (one query);
 *   2. one transaction: the card checked to be the user's, the deal's row locked (SELECT … FOR
 *      UPDATE), its price, sale window and units left checked, the purchase row inserted, the
 *      deal's units sold updated, COMMIT (synchronous_commit as the server has it: on);
 *   3. the purchase answered as JSON (200), or 400/401/404/409 with a JSON error.
 *
 * No payment processor, no coupons, no events, no views: what the service does beyond this is what
 * the bench's ratios show. Run as a process of its own (`node conventional-purchase-server.js`)
 * with CONVENTIONAL_DATABASE_URL, PORT, HOST, TLS_CERT_FILE, TLS_KEY_FILE and CONVENTIONAL_POOL (the
 * pool's connections, default {@link DEFAULT_POOL}); `GET /health` answers 200 once it listens.
 * {@link prepareConventionalDatabase} makes its tables and rows.
 */
import Fastify from 'fastify';
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client, Pool, PoolClient } from 'pg';

export const DEFAULT_POOL = 20;

const SCHEMA = `
CREATE TABLE partners (id text PRIMARY KEY, name text NOT NULL, api_key_sha256 bytea NOT NULL UNIQUE);
CREATE TABLE users (id text PRIMARY KEY, email text NOT NULL UNIQUE);
CREATE TABLE credit_cards (id text PRIMARY KEY, user_id text NOT NULL REFERENCES users, last4 text NOT NULL);
CREATE TABLE deals (
  id text PRIMARY KEY,
  price_per_unit integer NOT NULL,
  quantity integer NOT NULL,
  units_sold integer NOT NULL DEFAULT 0,
  start_at timestamptz NOT NULL,
  end_at timestamptz NOT NULL
);
CREATE TABLE purchases (
  id uuid PRIMARY KEY,
  deal_id text NOT NULL REFERENCES deals,
  user_id text NOT NULL REFERENCES users,
  credit_card_id text NOT NULL REFERENCES credit_cards,
  partner_id text NOT NULL REFERENCES partners,
  quantity integer NOT NULL,
  price_per_unit integer NOT NULL,
  total integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX purchases_user ON purchases (user_id);
CREATE INDEX purchases_deal ON purchases (deal_id);
`;

export interface ConventionalSeed {
  apiKey: string;
  deals: Array<{ id: string; price: number; quantity: number; startAt: string; endAt: string }>;
  buyers: Array<{ userId: string; cardId: string }>;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** Makes the tables on `client`'s (empty) database and fills them: one partner, the deals, the users and their cards. */
export async function prepareConventionalDatabase(
  client: Client,
  deals: ConventionalSeed['deals'],
  users: number,
): Promise<ConventionalSeed> {
  await client.query(SCHEMA);
  const apiKey = `bench_${randomUUID().replace(/-/g, '')}`;
  await client.query('INSERT INTO partners (id, name, api_key_sha256) VALUES ($1, $2, $3)', [
    randomUUID(),
    'Conventional bench',
    sha256(apiKey),
  ]);
  await client.query(
    'INSERT INTO deals (id, price_per_unit, quantity, start_at, end_at) SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::timestamptz[], $5::timestamptz[])',
    [
      deals.map((d) => d.id),
      deals.map((d) => d.price),
      deals.map((d) => d.quantity),
      deals.map((d) => d.startAt),
      deals.map((d) => d.endAt),
    ],
  );
  const buyers = Array.from({ length: users }, () => ({ userId: randomUUID(), cardId: randomUUID() }));
  await client.query('INSERT INTO users (id, email) SELECT * FROM unnest($1::text[], $2::text[])', [
    buyers.map((b) => b.userId),
    buyers.map((_, i) => `buyer${i}@bench.test`),
  ]);
  await client.query(`INSERT INTO credit_cards (id, user_id, last4) SELECT *, '4242' FROM unnest($1::text[], $2::text[])`, [
    buyers.map((b) => b.cardId),
    buyers.map((b) => b.userId),
  ]);
  await client.query('ANALYZE');
  return { apiKey, deals, buyers };
}

interface PurchaseBody {
  deal_id: string;
  quantity: number;
  user_id: string;
  credit_card_id: string;
  expected_price_per_unit: number;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(code);
  }
}

async function purchase(client: PoolClient, partnerId: string, body: PurchaseBody) {
  const card = await client.query({
    name: 'card',
    text: 'SELECT 1 FROM credit_cards WHERE id = $1 AND user_id = $2',
    values: [body.credit_card_id, body.user_id],
  });
  if (card.rowCount === 0) throw new Refusal(404, 'credit_card_not_found');
  const deal = await client.query<{ price_per_unit: number; left: number; on_sale: boolean }>({
    name: 'lock-deal',
    text: 'SELECT price_per_unit, quantity - units_sold AS left, (start_at <= now() AND now() < end_at) AS on_sale FROM deals WHERE id = $1 FOR UPDATE',
    values: [body.deal_id],
  });
  const row = deal.rows[0];
  if (!row) throw new Refusal(404, 'deal_not_found');
  if (!row.on_sale) throw new Refusal(409, 'deal_not_on_sale');
  if (row.price_per_unit !== body.expected_price_per_unit) throw new Refusal(409, 'price_changed');
  if (row.left < body.quantity) throw new Refusal(409, 'sold_out');
  const id = randomUUID();
  const total = row.price_per_unit * body.quantity;
  const inserted = await client.query<{ created_at: Date }>({
    name: 'insert-purchase',
    text:
      'INSERT INTO purchases (id, deal_id, user_id, credit_card_id, partner_id, quantity, price_per_unit, total) ' +
      'VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING created_at',
    values: [id, body.deal_id, body.user_id, body.credit_card_id, partnerId, body.quantity, row.price_per_unit, total],
  });
  await client.query({
    name: 'sell',
    text: 'UPDATE deals SET units_sold = units_sold + $2 WHERE id = $1',
    values: [body.deal_id, body.quantity],
  });
  return {
    purchase: {
      id,
      deal_id: body.deal_id,
      user_id: body.user_id,
      credit_card_id: body.credit_card_id,
      quantity: body.quantity,
      price_per_unit: row.price_per_unit,
      total,
      created_at: inserted.rows[0].created_at.toISOString(),
    },
    num_left: row.left - body.quantity,
  };
}

async function main(): Promise<void> {
  const pool = new Pool({
    connectionString: process.env.CONVENTIONAL_DATABASE_URL,
    max: Number(process.env.CONVENTIONAL_POOL ?? DEFAULT_POOL),
  });
  const app = Fastify({
    https: { cert: readFileSync(process.env.TLS_CERT_FILE!, 'utf8'), key: readFileSync(process.env.TLS_KEY_FILE!, 'utf8') },
    logger: false,
  });
  app.get('/health', async () => ({ status: 'ok' }));
  app.post<{ Querystring: { api_key?: string }; Body: PurchaseBody }>(
    '/purchases',
    {
      schema: {
        querystring: { type: 'object', properties: { api_key: { type: 'string' } } },
        body: {
          type: 'object',
          required: ['deal_id', 'quantity', 'user_id', 'credit_card_id', 'expected_price_per_unit'],
          properties: {
            deal_id: { type: 'string', minLength: 1, maxLength: 200 },
            quantity: { type: 'integer', minimum: 1, maximum: 100 },
            user_id: { type: 'string', minLength: 1, maxLength: 200 },
            credit_card_id: { type: 'string', minLength: 1, maxLength: 200 },
            expected_price_per_unit: { type: 'integer', minimum: 0 },
          },
        },
      },
    },
    async (request, reply) => {
      const key = request.query.api_key;
      const partner = key
        ? await pool.query<{ id: string }>({
            name: 'partner',
            text: 'SELECT id FROM partners WHERE api_key_sha256 = $1',
            values: [sha256(key)],
          })
        : null;
      if (!partner?.rows[0]) return reply.code(401).send({ error: 'unauthorized' });
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const answer = await purchase(client, partner.rows[0].id, request.body);
        await client.query('COMMIT');
        return answer;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        if (error instanceof Refusal) return reply.code(error.status).send({ error: error.code });
        throw error;
      } finally {
        client.release();
      }
    },
  );
  await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
  const stop = () => {
    app
      .close()
      .then(() => pool.end())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (require.main === module)
  main().catch((error: unknown) => {
    process.stderr.write(`conventional purchase server: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
