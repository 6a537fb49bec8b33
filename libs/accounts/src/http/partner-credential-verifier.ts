import { ViewStore } from '@deals/kernel';
import { CredentialVerifier, PartnerRef } from '@deals/wire';
import { Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { hashSecret } from '../domain/partner/partner-credentials';
import { PARTNER_CREDENTIALS, PartnerCredentials } from '../projections/partner-credentials/partner-credentials.projection';

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
const toRef = (view: PartnerCredentials): PartnerRef => ({ id: view._id, name: view.name, role: view.role });

/** Checks partner credentials against the hashes in the partner view. */
@Injectable()
export class PartnerCredentialVerifier extends CredentialVerifier {
  constructor(private readonly views: ViewStore) {
    super();
  }

  async byApiKey(apiKey: string): Promise<PartnerRef | null> {
    const view = await this.views.findOne<PartnerCredentials>(PARTNER_CREDENTIALS, { apiKeyHash: hashSecret(apiKey) });
    return view ? toRef(view) : null;
  }

  async byUsernameAndPassword(username: string, password: string): Promise<PartnerRef | null> {
    const view = await this.views.findOne<PartnerCredentials>(PARTNER_CREDENTIALS, { username });
    return view && sameHash(view.passwordHash, hashSecret(password)) ? toRef(view) : null;
  }
}
