import { FairSlots, slowHashes } from '@deals/kernel';
import { AccountsModule } from '@deals/accounts';
import { EventFeedModule } from '@deals/event-feed';
import { memoryCounters, RequestLimits } from '@deals/wire';
import { DynamicModule, Module } from '@nestjs/common';
import { ChangeMemberSessionHandler, RemoveMemberHandler } from './commands/member.commands';
import {
  HasLiveInvitationHandler,
  InviteMemberHandler,
  OpenInvitationHandler,
  SignUpMemberHandler,
} from './commands/member-invitation.commands';
import { EnrolMemberTotpHandler, SignInMemberHandler } from './commands/member-sign-in.commands';
import { MemberAuditSource } from './commands/member-audit-source';
import { MemberIdOfEmailHandler } from './commands/member-ids';
import { AccountController } from './http/account.controller';
import { KeysController } from './http/keys.controller';
import { ModeController } from './http/mode.controller';
import { MemberSessions } from './http/member-sessions';
import { SecurityController } from './http/security.controller';
import { SettlementModule } from '@deals/settlement';
import { SettingsController } from './http/settings.controller';
import { SettlementsController } from './http/settlements.controller';
import { BulkJobsPagesController } from './http/bulk-jobs.controller';
import { BulkJobsModule } from '@deals/bulk-jobs';
import { SecretCheckThrottle } from './http/secret-check-throttle';
import { SitePages } from './http/site-pages';
import { SitePageErrors } from './http/site-request';
import { SupportController } from './http/support.controller';
import { SupportLookup } from './http/support-lookup';
import { WebhooksController } from './http/webhooks.controller';
import { PrivacyController } from './http/privacy.controller';
import { SandboxMailPagesController } from './http/sandbox-mail.controller';

/** The partner site's members: invitations, sign-up, sign-in, sessions, TOTP (commands, no HTTP). Needs `SiteSecrets`. */
@Module({
  imports: [AccountsModule],
  providers: [
    InviteMemberHandler,
    OpenInvitationHandler,
    HasLiveInvitationHandler,
    SignUpMemberHandler,
    SignInMemberHandler,
    EnrolMemberTotpHandler,
    ChangeMemberSessionHandler,
    RemoveMemberHandler,
    MemberIdOfEmailHandler,
    MemberAuditSource,
    // One for the process: the bound on its password hashes holds across every handler.
    // The people's lane of the process's slow hashes: a member's sign-in never queues behind a partner's users.
    { provide: FairSlots, useValue: slowHashes.people },
  ],
})
export class PartnerSiteModule {}

/**
 * The partner site's pages under /partner. `limits`: the API's request limits (the pages spend the
 * partner's budget, and the throttle of secrets' checks counts where they count), or null when the service has none.
 */
@Module({})
export class PartnerSiteHttpModule {
  static forRoot({ limits }: { limits: RequestLimits | null }): DynamicModule {
    return {
      module: PartnerSiteHttpModule,
      // The webhooks pages use the event feed's writes and queries, the API's own.
      imports: [EventFeedModule, SettlementModule, BulkJobsModule],
      controllers: [
        AccountController,
        SecurityController,
        ModeController,
        KeysController,
        SettingsController,
        SettlementsController,
        BulkJobsPagesController,
        SupportController,
        WebhooksController,
        PrivacyController,
        SandboxMailPagesController,
      ],
      providers: [
        SitePages,
        MemberSessions,
        SupportLookup,
        SitePageErrors,
        { provide: SecretCheckThrottle, useValue: new SecretCheckThrottle(limits?.counters ?? memoryCounters) },
        ...(limits ? [{ provide: RequestLimits, useValue: limits }] : []),
      ],
      exports: [SitePages, MemberSessions],
    };
  }
}
