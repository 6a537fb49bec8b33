import { CredentialVerifier } from '@deals/wire';
import { Module } from '@nestjs/common';
import {
  ChangePartnerRateLimitHandler,
  ChangePartnerRollbackWindowHandler,
  CreatePartnerHandler,
  OpenSandboxHandler,
} from './commands/partner-account.commands';
import {
  IssuePartnerApiKeyHandler,
  RenamePartnerApiKeyHandler,
  RevokePartnerApiKeyHandler,
  RotatePartnerApiKeyHandler,
  RotatePartnerPasswordHandler,
} from './commands/partner-credentials.commands';
import { MakeCardDefaultHandler, StoreCardHandler } from './commands/store-card.command';
import { UserWrites } from './commands/user-writes';
import { FinishErasures } from './commands/finish-erasures';
import { DiscardErasedCopies } from './reactions/discard-erased-copies.reaction';
import {
  AcknowledgeUserErasureHandler,
  EraseUserHandler,
  IssueAccessTokenHandler,
  RegisterUserHandler,
  UpdateUserByEmailHandler,
  UpdateUserHandler,
} from './commands/user.handlers';
import { CreditCardsController } from './http/credit-cards.controller';
import { PartnerCredentialVerifier } from './http/partner-credential-verifier';
import { PartnerAuditController } from './http/partner-audit.controller';
import { UsersController } from './http/users.controller';
import { PartnerAudit } from './audit/partner-audit';
import { AccountQueries } from './queries/account.queries';
import { PartnerQueries } from './queries/partner.queries';
import { PartnerSettingsController } from './http/partner-settings.controller';
import { TestClocksController } from './http/test-clocks.controller';
import { AdvanceTestClockHandler, CreateTestClockHandler, DeleteTestClockHandler } from './commands/test-clock.commands';

/** Partners, users, stored cards and access tokens: commands, handlers and queries (no HTTP). */
@Module({
  providers: [
    CreatePartnerHandler,
    ChangePartnerRateLimitHandler,
    ChangePartnerRollbackWindowHandler,
    IssuePartnerApiKeyHandler,
    RotatePartnerApiKeyHandler,
    OpenSandboxHandler,
    RevokePartnerApiKeyHandler,
    RenamePartnerApiKeyHandler,
    RotatePartnerPasswordHandler,
    CreateTestClockHandler,
    AdvanceTestClockHandler,
    DeleteTestClockHandler,
    PartnerQueries,
    PartnerAudit,
    RegisterUserHandler,
    UpdateUserHandler,
    EraseUserHandler,
    AcknowledgeUserErasureHandler,
    UpdateUserByEmailHandler,
    IssueAccessTokenHandler,
    StoreCardHandler,
    MakeCardDefaultHandler,
    UserWrites,
    FinishErasures,
    DiscardErasedCopies,
    AccountQueries,
    { provide: CredentialVerifier, useClass: PartnerCredentialVerifier },
  ],
  exports: [CredentialVerifier, AccountQueries, PartnerQueries, PartnerAudit, UserWrites, FinishErasures],
})
export class AccountsModule {}

/** The accounts' HTTP routes. */
@Module({
  imports: [AccountsModule],
  controllers: [UsersController, CreditCardsController, PartnerSettingsController, PartnerAuditController, TestClocksController],
})
export class AccountsHttpModule {}
