import Fastify from 'fastify';
import { clientAddress, trustedProxyHops } from './client-address';

describe('the client address behind proxies', () => {
  const serve = async (hops: number) => {
    const app = Fastify({ trustProxy: trustedProxyHops(hops) });
    app.get('/', async (request) => ({ address: clientAddress(request), host: request.host }));
    await app.ready();
    return async (forwardedFor: string | undefined, remoteAddress = '10.0.0.1') => {
      const headers: Record<string, string> = { 'x-forwarded-host': 'partners.example.com' };
      if (forwardedFor !== undefined) headers['x-forwarded-for'] = forwardedFor;
      const answer = await app.inject({ method: 'GET', url: '/', headers, remoteAddress });
      return answer.json() as { address: string; host: string };
    };
  };

  it('takes the entry the one proxy appended, never one a client wrote before it', async () => {
    const addressOf = await serve(1);
    expect(await addressOf('198.51.100.1, 203.0.113.7')).toEqual({ address: '203.0.113.7', host: 'partners.example.com' });
    expect(await addressOf('198.51.100.1,198.51.100.2 , 2001:db8::1')).toMatchObject({ address: '2001:db8::1' });
    expect(await addressOf(undefined)).toMatchObject({ address: '10.0.0.1' });
  });

  it('takes the entry before those of the proxies when there are more', async () => {
    const addressOf = await serve(2);
    expect(await addressOf('198.51.100.1, 203.0.113.7, 10.0.0.9')).toMatchObject({ address: '203.0.113.7' });
  });

  it('takes the connecting peer when the forwarded entry is no IP address', async () => {
    const addressOf = await serve(1);
    expect(await addressOf(`<script>${'J'.repeat(6000)}`)).toMatchObject({ address: '10.0.0.1' });
    expect(await addressOf('198.51.100.1, 203.0.113.7:443')).toMatchObject({ address: '10.0.0.1' });
    expect(await addressOf('unknown')).toMatchObject({ address: '10.0.0.1' });
  });
});
