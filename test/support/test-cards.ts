/** Card numbers the simulated processor approves (its documented test cards), for tests that store cards. */
export const TEST_CARDS = { visa: '4242424242424242', mastercard: '5105105105105100' } as const;
