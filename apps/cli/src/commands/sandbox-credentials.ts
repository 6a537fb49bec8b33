import type { OpenedSandbox } from '@deals/accounts';

/** A sandbox's credentials as the CLI prints them in JSON. */
export const sandboxJson = (sandbox: OpenedSandbox) => ({
  partner_id: sandbox.partnerId,
  api_key: sandbox.apiKey,
  username: sandbox.username,
  password: sandbox.password,
});

/** The same, for a person. */
export const sandboxText = (test: ReturnType<typeof sandboxJson>) =>
  `Test credentials (the sandbox ${test.partner_id}: its own users, purchases and events, test cards only):\n` +
  `  api_key  ${test.api_key}\n  username ${test.username}\n  password ${test.password}\n`;
