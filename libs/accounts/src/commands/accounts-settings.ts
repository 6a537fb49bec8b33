/** Settings of the accounts context, from the service configuration. */
export abstract class AccountsSettings {
  /** Credit a new user gets when the partner gives no `credits`, in cents. */
  abstract readonly signupCreditCents: number;
  /** The picture shown for users (`image_url`): the site's default avatar. */
  abstract readonly defaultAvatarUrl: string;
  /** Whether live calls may store the published test cards (refused where real money moves). */
  abstract readonly liveTakesTestCards: boolean;
}
