/** Accounts: partners and their credentials. */
export { AccountsModule } from './accounts.module';
export { CreatePartner } from './commands/create-partner.command';
export type { CreatedPartner } from './commands/create-partner.command';
export { PARTNER_ROLES } from './domain/partner/partner.events';
export type { PartnerRole } from './domain/partner/partner.events';
export { partnerCredentialsProjection, PARTNER_CREDENTIALS } from './projections/partner-credentials/partner-credentials.projection';

import { partnerCredentialsProjection } from './projections/partner-credentials/partner-credentials.projection';
/** Every projection accounts owns. */
export const accountsProjections = [partnerCredentialsProjection];
