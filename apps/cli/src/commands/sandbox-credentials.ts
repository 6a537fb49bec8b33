import { sandboxCredentialsJson } from '@deals/accounts';

/** A sandbox's credentials as the CLI prints them for a person. */
export const sandboxText = (test: ReturnType<typeof sandboxCredentialsJson>) =>
  `Test credentials (the sandbox ${test.partner_id}: its own users, purchases and events, test cards only):\n` +
  `  api_key  ${test.api_key}\n  username ${test.username}\n  password ${test.password}\n`;
