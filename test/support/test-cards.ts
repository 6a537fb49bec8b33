/** Card numbers the simulated processor approves (its documented test cards), for tests that store cards. */
export const TEST_CARDS = { visa: '4242424242424242', mastercard: '5105105105105100' } as const;
/** The simulated processor's test card that it declines. */
export const DECLINED_TEST_CARD = '4000000000000002';
/** Test cards whose charges it approves and whose refunds it refuses, or answers late (the money back, the answer lost). */
export const REFUND_REFUSED_TEST_CARD = '4000000000005126';
export const REFUND_LATE_TEST_CARD = '4000000000007726';

/** Something that calls the running service (an {@link ApiProcess} or a harness). */
interface Caller {
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

/** A new user with a stored card (an approved test card unless `number` says otherwise): their ids. */
export async function buyerWithCard(
  api: Caller,
  apiKey: string,
  email: string,
  number: string = TEST_CARDS.visa,
): Promise<{ userId: string; cardId: string }> {
  const query = `?api_key=${apiKey}`;
  const user = await api.call('POST', `/users${query}`, { email });
  if (user.status !== 200) throw new Error(`the user ${email} was not made: ${user.status} ${JSON.stringify(user.body)}`);
  const userId: string = user.body.user_id;
  const card = await api.call('POST', `/credit_cards${query}`, {
    user_id: userId,
    number,
    verification_value: '123',
    month: 12,
    year: 2030,
    zip_code: '60601',
  });
  if (card.status !== 200) throw new Error(`the card of ${email} was not stored: ${card.status} ${JSON.stringify(card.body)}`);
  return { userId, cardId: card.body.credit_card_id };
}
