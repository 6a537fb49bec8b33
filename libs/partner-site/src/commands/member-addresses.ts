import { OwnAddresses } from '@deals/messaging';
import { foldedIdentity, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { PARTNER_MEMBERS, PartnerMember } from '../projections/partner-members/partner-members.projection';

/**
 * The addresses of a partner's people: each active member's (invited by the service's operator, and
 * signed up), folded (`foldedIdentity`), so that one invited before addresses were folded matches too.
 * A sandbox emails these for real; its other mail is kept in its outbox.
 */
@Injectable()
export class MemberAddresses extends OwnAddresses {
  constructor(private readonly views: ViewStore) {
    super();
  }

  async of(livePartnerId: string): Promise<ReadonlySet<string>> {
    const people = await this.views.find<PartnerMember>(PARTNER_MEMBERS, { partnerId: livePartnerId, status: 'active' });
    return new Set(people.map((person) => foldedIdentity(person.email)));
  }
}
