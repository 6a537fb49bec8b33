import { SystemClock } from '@deals/kernel';
import { createServer } from 'node:net';
import { BullmqScheduler } from './bullmq-scheduler.adapter';

/** A port nothing listens on: one the system gave and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('BullmqScheduler without Redis', () => {
  it('fails its start within its wait, naming REDIS_URL without its password, instead of waiting for Redis for good', async () => {
    const port = await closedPort();
    const errors: Error[] = [];
    const scheduler = new BullmqScheduler({
      url: `redis://:s3cret@127.0.0.1:${port}/0`,
      prefix: 'none',
      clock: new SystemClock(),
      startWaitMs: 500,
      onError: (e) => errors.push(e),
    });
    scheduler.handle('anything', async () => undefined);
    const started = Date.now();
    await expect(scheduler.start()).rejects.toThrow(
      /^REDIS_URL: Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+\/0 did not answer within 0\.5 s/,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    await scheduler.close();
  });
});
