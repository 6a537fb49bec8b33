import { NoticeRecipient, WebhookNoticeRecipients } from '@deals/event-feed';
import { livePartnerOf, ViewStore } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import { PARTNER_MEMBERS, PartnerMember } from '../projections/partner-members/partner-members.projection';

/** The event feed's notices go to a partner's people who have signed up and not been removed (a sandbox's: its live partner's). */
@Injectable()
export class MemberNoticeRecipients extends WebhookNoticeRecipients {
  constructor(private readonly views: ViewStore) {
    super();
  }

  async of(partnerId: string): Promise<NoticeRecipient[]> {
    const people = await this.views.find<PartnerMember>(PARTNER_MEMBERS, { partnerId: livePartnerOf(partnerId), status: 'active' });
    return people.map((person) => ({ id: person._id, email: person.email }));
  }
}
