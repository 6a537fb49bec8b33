import { OPERATOR, RandomIdGenerator, SystemClock, ViewDocument, ViewStore } from '@deals/kernel';
import { MemoryEventStore } from '@deals/testing';
import {
  CreatePartner,
  CreatePartnerHandler,
  RotatePartnerApiKey,
  RotatePartnerApiKeyHandler,
} from '../commands/partner-credentials.commands';
import { apiKeyStream } from '../domain/partner/api-key-claim.decider';
import { hashSecret } from '../domain/partner/partner-credentials';
import { PARTNER_ACCOUNTS } from '../projections/partner-accounts/partner-accounts.projection';
import { PARTNER_API_KEYS } from '../projections/partner-api-keys/partner-api-keys.projection';
import { PartnerCredentialVerifier } from './partner-credential-verifier';

/** The log, counting the streams read. */
class CountingLog extends MemoryEventStore {
  readonly streamsRead: string[] = [];
  override readStream(streamId: string, fromRevision?: number) {
    this.streamsRead.push(streamId);
    return super.readStream(streamId, fromRevision);
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
