/** One person to tell: an id (for the message's id) and an email address. */
export interface NoticeRecipient {
  id: string;
  email: string;
}

/**
 * Who is emailed when the service disables one of a partner's webhook endpoints: the partner's
 * people, whom the partner site knows. A port, so that the feed does not depend on the site (the
 * site depends on the feed for its webhooks pages); the service binds it to the site's members.
 */
export abstract class WebhookNoticeRecipients {
  abstract of(partnerId: string): Promise<NoticeRecipient[]>;
}
