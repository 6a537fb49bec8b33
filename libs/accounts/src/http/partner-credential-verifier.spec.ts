import { OPERATOR, RandomIdGenerator, SystemClock, ViewDocument, ViewStore } from '@deals/kernel';
import { MemoryEventStore } from '@deals/testing';
import {
  ChangePartnerRateLimit,
  ChangePartnerRateLimitHandler,
  CreatePartner,
  CreatePartnerHandler,
} from '../commands/partner-account.commands';
import {
  RotatePartnerApiKey,
  RotatePartnerApiKeyHandler,
  RotatePartnerPassword,
  RotatePartnerPasswordHandler,
} from '../commands/partner-credentials.commands';
import { apiKeyStream } from '../domain/partner/api-key-claim.decider';
import { hashSecret, PartnerPassword } from '../domain/partner/partner-credentials';
import { v3PasswordStream } from '../domain/partner/v3-password-claim.decider';
import { PARTNER_ACCOUNTS } from '../projections/partner-accounts/partner-accounts.projection';
import { PARTNER_API_KEYS } from '../projections/partner-api-keys/partner-api-keys.projection';
import { PartnerCredentialVerifier } from './partner-credential-verifier';

/** The log, counting the streams read. */
class CountingLog extends MemoryEventStore {
  readonly streamsRead: string[] = [];
  /** The events each read found, in the order read. */
  readonly eventsRead: number[] = [];
  override async readStream(streamId: string, fromRevision?: number) {
    this.streamsRead.push(streamId);
    const events = await super.readStream(streamId, fromRevision);
    this.eventsRead.push(events.length);
    return events;
  }
}

/** The two partner views a key's look-up reads, counting the reads. */
function partnerViews() {
  const docs = new Map<string, ViewDocument>([
    [
      `${PARTNER_API_KEYS}/${hashSecret('key-1')}`,
      { _id: hashSecret('key-1'), _pos: '1', partnerId: 'p1', keyId: 'k1', expiresAt: null, revokedAt: null } as ViewDocument,
    ],
    [`${PARTNER_ACCOUNTS}/p1`, { _id: 'p1', _pos: '1', name: 'Acme', role: 'partner', requestsPerMinute: 600 } as ViewDocument],
  ]);
  const reads: string[] = [];
  const views = {
    findById: async (collection: string, id: string) => {
      reads.push(collection);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return docs.get(`${collection}/${id}`) ?? null;
    },
  } as unknown as ViewStore;
  return { views, reads };
}

describe('partner API keys checked against the views', () => {
  it('looks a key up once for all the requests that present it together', async () => {
    const { views, reads } = partnerViews();
    const verifier = new PartnerCredentialVerifier(views, new SystemClock(), new CountingLog());
    const partners = await Promise.all(Array.from({ length: 20 }, () => verifier.byApiKey('key-1')));
    expect(partners.every((p) => p?.id === 'p1' && p.credentialId === 'k1')).toBe(true);
    expect(reads).toEqual([PARTNER_API_KEYS, PARTNER_ACCOUNTS]);
  });

  it('shares a failed look-up with the requests waiting on it, and looks up again after it', async () => {
    const { views, reads } = partnerViews();
    const verifier = new PartnerCredentialVerifier(views, new SystemClock(), new CountingLog());
    expect(await Promise.all([verifier.byApiKey('wrong'), verifier.byApiKey('wrong')])).toEqual([null, null]);
    expect(reads).toEqual([PARTNER_API_KEYS]);
    expect(await verifier.byApiKey('wrong')).toBeNull();
    expect(reads).toEqual([PARTNER_API_KEYS, PARTNER_API_KEYS]);
  });

  it('finds a key the views do not show yet in the log, live, and a wrong one with one read of a stream that holds nothing', async () => {
    const { views, reads } = partnerViews();
    const log = new CountingLog();
    const [clock, ids] = [new SystemClock(), new RandomIdGenerator()];
    const created = await new CreatePartnerHandler(log, clock, ids).execute(new CreatePartner('Just made', 'partner', OPERATOR, 900));
    const verifier = new PartnerCredentialVerifier(views, clock, log);
    expect(await verifier.byApiKey(created.apiKey)).toEqual({
      id: created.partnerId,
      name: 'Just made',
      role: 'partner',
      requestsPerMinute: 900,
      livemode: true,
      credentialId: created.keyId,
    });
    expect(await verifier.byApiKey(created.sandbox!.apiKey)).toMatchObject({ id: created.sandbox!.partnerId, livemode: false });
    // A rotation's new key at once; the old one, ended at once (`now`), says so.
    const rotated = await new RotatePartnerApiKeyHandler(log, clock, ids).execute(
      new RotatePartnerApiKey(created.partnerId, created.keyId, clock.now().toISOString(), OPERATOR),
    );
    expect(await verifier.byApiKey(rotated.apiKey)).toMatchObject({ id: created.partnerId, credentialId: rotated.keyId });
    // Another process, which had not looked the old key up: it finds it revoked.
    await expect(new PartnerCredentialVerifier(views, clock, log).byApiKey(created.apiKey)).rejects.toThrow(
      /^this api_key was revoked at /,
    );

    log.streamsRead.length = 0;
    reads.length = 0;
    expect(await verifier.byApiKey('dk_wrong')).toBeNull();
    expect([reads, log.streamsRead]).toEqual([[PARTNER_API_KEYS], [apiKeyStream(hashSecret('dk_wrong'))]]);
  });
});

describe('v3 usernames and passwords checked against the views', () => {
  /** The accounts view as a process sees it: `shown` partners by username, counting the look-ups. */
  function accountViews(shown: Array<{ partnerId: string; username: string; passwords: PartnerPassword[] }>) {
    const lookUps: unknown[] = [];
    const views = {
      findOne: async (collection: string, filter: { username: string }) => {
        lookUps.push([collection, Object.keys(filter)]);
        const found = shown.find((p) => p.username === filter.username);
        return found ? { _id: found.partnerId, _pos: '1', name: 'Long', role: 'partner', requestsPerMinute: null, ...found } : null;
      },
    } as unknown as ViewStore;
    return { views, lookUps };
  }

  it("does the same reads for a wrong password of a known username as of an unknown one, however long the partner's history", async () => {
    const log = new CountingLog();
    const [clock, ids] = [new SystemClock(), new RandomIdGenerator()];
    const created = await new CreatePartnerHandler(log, clock, ids).execute(new CreatePartner('Long history', 'partner', OPERATOR));
    const limits = new ChangePartnerRateLimitHandler(log, clock, ids);
    for (let i = 0; i < 300; i++) await limits.execute(new ChangePartnerRateLimit(created.partnerId, 100 + i, OPERATOR));
    const { views, lookUps } = accountViews([
      { partnerId: created.partnerId, username: created.username, passwords: [{ hash: hashSecret(created.password), expiresAt: null }] },
    ]);
    const verifier = new PartnerCredentialVerifier(views, clock, log);
    /** The reads one wrong attempt makes: of the views, of the log's streams (by kind), and the events found. */
    const attempt = async (username: string, password: string) => {
      [lookUps.length, log.streamsRead.length, log.eventsRead.length] = [0, 0, 0];
      expect(await verifier.byUsernameAndPassword(username, password)).toBeNull();
      return { views: [...lookUps], streams: log.streamsRead.map((id) => id.replace(/-.*/, '')), events: [...log.eventsRead] };
    };
    const known = await attempt(created.username, 'wrong-password-of-24-chars');
    const unknown = await attempt('no-such-user-0a1b2c', 'wrong-password-of-24-chars');
    expect(known).toEqual(unknown);
    expect(known).toEqual({ views: [[PARTNER_ACCOUNTS, ['username']]], streams: ['v3password'], events: [0] });
    expect(log.streamsRead).toEqual([v3PasswordStream(hashSecret('wrong-password-of-24-chars'))]);
    // The right password, shown by the view: no read of the log at all.
    log.streamsRead.length = 0;
    expect(await verifier.byUsernameAndPassword(created.username, created.password)).toMatchObject({ id: created.partnerId });
    expect(log.streamsRead).toEqual([]);
  });

  it('compares as many hashes for a known username with passwords in rotation grace as for an unknown one', async () => {
    const inGrace = (n: number) => ({ hash: hashSecret(`password-${n}`), expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    const { views } = accountViews([
      {
        partnerId: 'p-rotating',
        username: 'rotating-partner',
        passwords: [{ hash: hashSecret('current'), expiresAt: null }, ...Array.from({ length: 6 }, (_, i) => inGrace(i))],
      },
      { partnerId: 'p-fresh', username: 'fresh-partner', passwords: [{ hash: hashSecret('fresh'), expiresAt: null }] },
    ]);
    const verifier = new PartnerCredentialVerifier(views, new SystemClock(), new CountingLog());
    // The module itself (an `import * as` is a copy of its fields under esModuleInterop).
    const compares = jest.spyOn(jest.requireActual<typeof import('node:crypto')>('node:crypto'), 'timingSafeEqual');
    const comparesOf = async (username: string) => {
      compares.mockClear();
      expect(await verifier.byUsernameAndPassword(username, 'wrong-password-of-24-chars')).toBeNull();
      return compares.mock.calls.length;
    };
    try {
      const counts = [await comparesOf('rotating-partner'), await comparesOf('fresh-partner'), await comparesOf('no-such-user-0a1b2c')];
      expect(counts[0]).toBeGreaterThan(0);
      expect(new Set(counts).size).toBe(1);
    } finally {
      compares.mockRestore();
    }
  });

  it('finds a password the views do not show yet in the log, by its claim, and only with its own username', async () => {
    const log = new CountingLog();
    const [clock, ids] = [new SystemClock(), new RandomIdGenerator()];
    const created = await new CreatePartnerHandler(log, clock, ids).execute(new CreatePartner('Just made', 'partner', OPERATOR));
    const { views } = accountViews([]);
    const verifier = new PartnerCredentialVerifier(views, clock, log);
    expect(await verifier.byUsernameAndPassword(created.username, created.password)).toMatchObject({
      id: created.partnerId,
      credentialId: 'password',
    });
    expect(await verifier.byUsernameAndPassword(created.sandbox!.username, created.sandbox!.password)).toMatchObject({
      id: created.sandbox!.partnerId,
      livemode: false,
    });
    // Another partner's username with this password: wrong.
    expect(await verifier.byUsernameAndPassword(created.sandbox!.username, created.password)).toBeNull();
    // A rotated password at once, beside the old one, which the view still shows alone.
    const rotated = await new RotatePartnerPasswordHandler(log, clock, ids).execute(
      new RotatePartnerPassword(created.partnerId, new Date(Date.now() + 3_600_000).toISOString(), OPERATOR),
    );
    const behind = accountViews([
      { partnerId: created.partnerId, username: created.username, passwords: [{ hash: hashSecret(created.password), expiresAt: null }] },
    ]);
    const stale = new PartnerCredentialVerifier(behind.views, clock, log);
    expect(await stale.byUsernameAndPassword(created.username, rotated.password)).toMatchObject({ id: created.partnerId });
    expect(await stale.byUsernameAndPassword(created.username, created.password)).toMatchObject({ id: created.partnerId });
  });
});
