import { accessTokensProjection } from './access-tokens/access-tokens.projection';
import { partnerCredentialsProjection } from './partner-credentials/partner-credentials.projection';
import { storedCardsProjection } from './stored-cards/stored-cards.projection';
import { userAccountsProjection } from './user-accounts/user-accounts.projection';

/** Every projection accounts owns; an entry of its own, free of HTTP and Nest, for the CLI's quick status. */
export const accountsProjections = [partnerCredentialsProjection, userAccountsProjection, storedCardsProjection, accessTokensProjection];
