import { Webhook } from 'standardwebhooks';
import { InvalidWebhookSecret, newWebhookSecret, signWebhook, webhookHeaders } from './webhook-signature';

const now = () => Math.floor(Date.now() / 1000);
const body = JSON.stringify({ type: 'purchase.completed', data: { purchase_id: 'p1', note: 'café ✓' } });

describe('newWebhookSecret', () => {
  it('makes whsec_ and the base64 of 32 random bytes, a new one each time', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
  });

  it('encodes the bytes it is given, from 24 to 64 of them', () => {
    expect(newWebhookSecret(Buffer.alloc(24, 1))).toBe('whsec_' + Buffer.alloc(24, 1).toString('base64'));
    expect(() => newWebhookSecret(Buffer.alloc(64))).not.toThrow();
    expect(() => newWebhookSecret(Buffer.alloc(23))).toThrow(InvalidWebhookSecret);
    expect(() => newWebhookSecret(Buffer.alloc(65))).toThrow(InvalidWebhookSecret);
  });
});

describe('signWebhook', () => {
  it('gives the signature of the Standard Webhooks test vector', () => {
    const signature = signWebhook(
      ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs what the standardwebhooks package verifies', () => {
    const secret = newWebhookSecret();
    const headers = webhookHeaders([secret], 'msg_1', now(), body);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('signs with each secret of a rotation, so a receiver holding either one accepts the call', () => {
    const [old, current] = [newWebhookSecret(), newWebhookSecret()];
    const headers = webhookHeaders([old, current], 'msg_2', now(), body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(old).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(new Webhook(current).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, { ...headers })).toThrow();
  });

  it('signs the body byte for byte: any change to it, the id or the timestamp fails verification', () => {
    const secret = newWebhookSecret();
    const headers = webhookHeaders([secret], 'msg_3', now(), body);
    const verify = (b: string, h: Record<string, string>) => () => new Webhook(secret).verify(b, h);
    expect(verify(body.replace('p1', 'p2'), { ...headers })).toThrow();
    expect(verify(body, { ...headers, 'webhook-id': 'msg_4' })).toThrow();
    expect(verify(body, { ...headers, 'webhook-timestamp': String(now() - 1) })).toThrow();
  });

  it('refuses a secret of the wrong form without repeating it', () => {
    const short = 'whsec_' + Buffer.alloc(16, 7).toString('base64');
    for (const secret of [
      '',
      'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'whsec_',
      'whsec_not base64!!',
      short,
      'whsec_' + Buffer.alloc(65).toString('base64'),
    ]) {
      let thrown: unknown;
      try {
        signWebhook([secret], 'msg', 1, body);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidWebhookSecret);
      if (secret.length > 'whsec_'.length) expect((thrown as Error).message).not.toContain(secret.slice('whsec_'.length));
    }
    expect(() => signWebhook([], 'msg', 1, body)).toThrow(InvalidWebhookSecret);
  });

  it('refuses a timestamp that is not whole seconds', () => {
    expect(() => signWebhook([newWebhookSecret()], 'msg', 1.5, body)).toThrow(RangeError);
    expect(() => signWebhook([newWebhookSecret()], 'msg', Date.now() * 1e6, body)).toThrow(RangeError);
  });
});

describe('webhookHeaders', () => {
  it('names the message, its time, the signature, the JSON body and the service', () => {
    const secret = newWebhookSecret();
    expect(webhookHeaders([secret], 'msg_5', 1700000000, body)).toEqual({
      'webhook-id': 'msg_5',
      'webhook-timestamp': '1700000000',
      'webhook-signature': signWebhook([secret], 'msg_5', 1700000000, body),
      'content-type': 'application/json',
      'user-agent': expect.stringMatching(/^deals-service-webhooks\//),
    });
  });
});
