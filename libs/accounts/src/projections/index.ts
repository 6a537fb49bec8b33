import { accessTokensProjection } from './access-tokens/access-tokens.projection';
import { partnerAccountsProjection } from './partner-accounts/partner-accounts.projection';
import { partnerApiKeysProjection } from './partner-api-keys/partner-api-keys.projection';
import { storedCardsProjection } from './stored-cards/stored-cards.projection';
import { testClocksProjection } from './test-clocks/test-clocks.projection';
import { userAccountsProjection } from './user-accounts/user-accounts.projection';
import { userErasuresProjection } from './user-erasures/user-erasures.projection';

/** Every projection accounts owns; an entry of its own, free of HTTP and Nest, for the CLI's quick status. */
export const accountsProjections = [
  partnerAccountsProjection,
  partnerApiKeysProjection,
  userAccountsProjection,
  userErasuresProjection,
  storedCardsProjection,
  accessTokensProjection,
  testClocksProjection,
];
export { userAccountsProjection };
export type { UserAccount } from './user-accounts/user-accounts.projection';
export { erasedProfile } from '../domain/user/user.events';
