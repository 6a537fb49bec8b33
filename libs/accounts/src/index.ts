/** Accounts: partners and their credentials, users, stored cards, access tokens. */
export { AccountsHttpModule, AccountsModule } from './accounts.module';
export { AccountsSettings } from './commands/accounts-settings';
export {
  ChangePartnerRateLimit,
  ChangePartnerRollbackWindow,
  CreatePartner,
  OpenSandbox,
  sandboxCredentialsJson,
} from './commands/partner-account.commands';
export type { CreatedPartner } from './commands/partner-account.commands';
export type { OpenedSandbox } from './commands/partner-command-handler';
export {
  IssuePartnerApiKey,
  RenamePartnerApiKey,
  RevokePartnerApiKey,
  RotatePartnerApiKey,
  RotatePartnerPassword,
} from './commands/partner-credentials.commands';
export type { IssuedApiKey, RotatedApiKey, RotatedPassword } from './commands/partner-credentials.commands';
export { MAX_REQUESTS_PER_MINUTE, MAX_WORKING_KEYS, keyState } from './domain/partner/partner.decider';
export type { KeyState } from './domain/partner/partner.decider';
export { PartnerQueries, partnerApiKeys } from './queries/partner.queries';
export { TEST_CLOCKS } from './projections/test-clocks/test-clocks.projection';
export type { TestClockView } from './projections/test-clocks/test-clocks.projection';
export { PartnerAudit } from './audit/partner-audit';
export type { PartnerAuditEntry, PartnerAuditSource } from './audit/partner-audit';
export type { PartnerApiKey, PartnerSettings, PartnerSummary } from './queries/partner.queries';
export { RegisterUser, UpdateUser, UpdateUserByEmail, IssueAccessToken, EraseUser, AcknowledgeUserErasure } from './commands/user.commands';
export { StoreCard, MakeCardDefault } from './commands/store-card.command';
export { AccountQueries } from './queries/account.queries';
export type { NewProfile, NewUser, PurchaseUser, UserChanges } from './domain/user/user-profile';
export { cardExpiryIssue, cardIssue, enteredCard } from './commands/store-card.command';
/** The request schemas of a user and a card, for calls of other contexts that take them (the full purchase). */
export { createUserBody, emailField, passwordFields, profileFields, purchaseUserFields } from './http/user.request';
export { cardFields, cardObject } from './http/credit-card.request';
export { UserWrites } from './commands/user-writes';
/** The memory-hard password hash (scrypt) of users' and partner members' passwords. */
export { hashPassword, verifyPassword } from './commands/password-hash';
export { DEFAULT_ROLLBACK_WINDOW_HOURS, MAX_ROLLBACK_WINDOW_HOURS, PARTNER_ROLES } from './domain/partner/partner.events';
export type { PartnerRole } from './domain/partner/partner.events';
export { partnerAccountsProjection, PARTNER_ACCOUNTS } from './projections/partner-accounts/partner-accounts.projection';
export { partnerApiKeysProjection, PARTNER_API_KEYS } from './projections/partner-api-keys/partner-api-keys.projection';
export type { PartnerApiKeyView } from './projections/partner-api-keys/partner-api-keys.projection';
export { USER_ACCOUNTS } from './projections/user-accounts/user-accounts.projection';
export { STORED_CARDS } from './projections/stored-cards/stored-cards.projection';
export { ACCESS_TOKENS } from './projections/access-tokens/access-tokens.projection';

export { accountsProjections } from './projections';
/** A user in its API shape (the partner event feed renders it too). */
export { toUser } from './http/account.answers';
export { ACCOUNTS_ERASURE_EVENTS, ACCOUNTS_PERSONAL_FIELDS } from './domain/user/user-personal-data';
export { USER_ERASURES } from './projections/user-erasures/user-erasures.projection';
export type { UserErasure } from './projections/user-erasures/user-erasures.projection';
export { FinishErasures } from './commands/finish-erasures';
