import { SystemClock, ViewDocument, ViewStore } from '@deals/kernel';
import { hashSecret } from '../domain/partner/partner-credentials';
import { PARTNER_ACCOUNTS } from '../projections/partner-accounts/partner-accounts.projection';
import { PARTNER_API_KEYS } from '../projections/partner-api-keys/partner-api-keys.projection';
import { PartnerCredentialVerifier } from './partner-credential-verifier';

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
    const verifier = new PartnerCredentialVerifier(views, new SystemClock());
    const partners = await Promise.all(Array.from({ length: 20 }, () => verifier.byApiKey('key-1')));
    expect(partners.every((p) => p?.id === 'p1' && p.credentialId === 'k1')).toBe(true);
    expect(reads).toEqual([PARTNER_API_KEYS, PARTNER_ACCOUNTS]);
  });

  it('shares a failed look-up with the requests waiting on it, and looks up again after it', async () => {
    const { views, reads } = partnerViews();
    const verifier = new PartnerCredentialVerifier(views, new SystemClock());
    expect(await Promise.all([verifier.byApiKey('wrong'), verifier.byApiKey('wrong')])).toEqual([null, null]);
    expect(reads).toEqual([PARTNER_API_KEYS]);
    expect(await verifier.byApiKey('wrong')).toBeNull();
    expect(reads).toEqual([PARTNER_API_KEYS, PARTNER_API_KEYS]);
  });
});
