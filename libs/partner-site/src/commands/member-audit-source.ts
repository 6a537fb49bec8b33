import { PartnerAudit } from '@deals/accounts';
import { EventStore, ViewStore } from '@deals/kernel';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { memberStream } from '../domain/member/member.events';
import { PARTNER_MEMBERS, PartnerMember } from '../projections/partner-members/partner-members.projection';

/** Adds the streams of a partner's people (invitations, sign-ins, failed ones, sessions, TOTP) to the partner's audit. */
@Injectable()
export class MemberAuditSource implements OnModuleInit {
  constructor(
    private readonly audit: PartnerAudit,
    private readonly views: ViewStore,
    private readonly store: EventStore,
  ) {}

  onModuleInit(): void {
    this.audit.addSource(async (partnerId) => {
      const members = await this.views.find<PartnerMember>(PARTNER_MEMBERS, { partnerId });
      return (await Promise.all(members.map((member) => this.store.readStream(memberStream(member._id))))).flat();
    });
  }
}
