/** Who the service's emails come from. */
export interface MailSettings {
  /** `From`, e.g. `"Deals" <deals@example.com>`. */
  from: string;
  /** `Reply-To`, when replies go elsewhere. */
  replyTo: string | null;
}
