import { AccountQueries } from '@deals/accounts';
import {
  Clock,
  EventStore,
  fold,
  handleCommand,
  inTestClock,
  KeyedMutex,
  loadCachedAggregate,
  MailNotSent,
  OPERATOR,
  OutgoingEmail,
  Scheduler,
  testClockDecider,
  testClockOf,
  testClockStream,
  ViewStore,
} from '@deals/kernel';
import {
  CouponLinks,
  giftMailJob,
  GiftMailed,
  MAIL_GIFT_JOB,
  PURCHASE_DETAILS,
  PurchaseDetails,
  purchaseDecider,
  PurchaseEvent,
  PurchaseReserved,
  purchaseStream,
} from '@deals/purchasing';
import { Injectable, Logger } from '@nestjs/common';
import { UserMail } from '../sandbox-mail/user-mail';

/** What a gift's mail shows: how it greets, the deal, the buyer's message, and each coupon's printable page. */
interface GiftMail {
  name: string;
  dealTitle: string;
  message: string | null;
  coupons: Array<{ id: string; url: string }>;
}

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The gift's message to its recipient: both bodies, the same Message-ID on a resend. */
export function giftEmail(gift: GiftMail, to: string, messageId: string): OutgoingEmail {
  const subject = `A gift for you: ${gift.dealTitle}`;
  const units = gift.coupons.length === 1 ? 'a coupon' : `${gift.coupons.length} coupons`;
  const text = [
    `Hello ${gift.name},`,
    '',
    `You have been given ${gift.dealTitle}: ${units}, yours to use.`,
    ...(gift.message === null ? [] : ['', gift.message]),
    '',
    ...gift.coupons.map((coupon) => `Coupon ${coupon.id}: ${coupon.url}`),
    '',
  ].join('\n');
  const html = [
    `<!doctype html><html><body style="font-family:sans-serif">`,
    `<p>Hello ${escape(gift.name)},</p>`,
    `<p>You have been given <strong>${escape(gift.dealTitle)}</strong>: ${units}, yours to use.</p>`,
    gift.message === null ? '' : `<blockquote style="white-space:pre-wrap">${escape(gift.message)}</blockquote>`,
    `<ul>${gift.coupons.map((coupon) => `<li><a href="${escape(coupon.url)}">Coupon ${escape(coupon.id)}</a></li>`).join('')}</ul>`,
    `</body></html>`,
  ].join('\n');
  return { to, subject, text, html, messageId };
}

type Outcome = Pick<GiftMailed['data'], 'outcome' | 'reason'>;

/**
 * Mails a gift purchase's recipient its coupons and message at its delivery time (`mail-gift`, armed
 * when the gift is sold), through the user mail (a sandbox's kept in its outbox but for its own
 * people), and records what became of it once on the purchase (`GiftMailed`). What is mailed is
 * decided from the purchase's stream: a gift paid for whose mail is not recorded. The recipient is
 * mailed at their address now; one deleted or erased is not mailed (recorded `not_sent`), nor is an
 * address the mail server refuses for good; one with a refund still pending waits for the
 * refund's end, which arms it again; a temporary refusal is tried again by the scheduler, then by
 * the next arming. `rearm` arms every gift the view shows due (a process start, and each hour with
 * the batches'): a crash loses none, and one stopped as it sent may be mailed twice (the same
 * Message-ID). A test clock's gift waits on the clock: mailed when it is advanced past
 * its time, in its time.
 */
@Injectable()
export class MailGifts {
  private readonly logger = new Logger('GiftMail');
  private readonly running = new KeyedMutex();

  constructor(
    private readonly scheduler: Scheduler,
    private readonly store: EventStore,
    private readonly views: ViewStore,
    private readonly clock: Clock,
    private readonly mail: UserMail,
    private readonly accounts: AccountQueries,
    private readonly links: CouponLinks,
  ) {
    this.scheduler.handle(MAIL_GIFT_JOB, async (job) => {
      const purchaseId = String(job.data.purchaseId);
      // A timer may fire a moment early (see ReleaseExpiredHolds): failing the run makes the scheduler try again shortly.
      if ((await this.deliver(purchaseId, String(job.data.partnerId))) === 'early')
        throw new Error(`purchase ${purchaseId}: its gift is mailed later: its job ran early`);
    });
  }

  /** Arms the mail of every gift paid for and not mailed yet (a test clock's, where its clock does not hold it). */
  async rearm(): Promise<void> {
    for (const purchase of await this.views.find<PurchaseDetails>(PURCHASE_DETAILS, { giftMailDue: true })) await this.arm(purchase);
  }

  private async arm(purchase: PurchaseDetails): Promise<void> {
    const { _id: purchaseId, partnerId } = purchase;
    const job = giftMailJob(purchaseId, partnerId, new Date(purchase.gift?.deliverAt ?? purchase.createdAt));
    const clockId = testClockOf(partnerId);
    try {
      if (clockId === null) return await this.scheduler.schedule(job);
      const { state } = await loadCachedAggregate(this.store, testClockStream(clockId), testClockDecider);
      // A deleted clock runs none of its jobs: its gift is never mailed.
      if (state.deleted) await this.record(purchaseId, partnerId, { outcome: 'not_sent', reason: 'its test clock was deleted' });
      else if (!state.pending.has(job.id) && state.frozenTime)
        await inTestClock({ clockId, partnerId, at: new Date(state.frozenTime) }, () => this.scheduler.schedule(job));
    } catch (error) {
      // Armed again at the next arming (the gift stays due in the view).
      this.logger.error(`purchase ${purchaseId}: its gift's mail not armed: ${String(error)}`);
    }
  }

  /**
   * Mails the gift once its time has come, and records it; nothing for a purchase not (or no longer)
   * due, nor while a refund of it is pending (`waiting`).
   */
  deliver(purchaseId: string, partnerId: string): Promise<'nothing' | 'early' | 'waiting' | Outcome['outcome']> {
    return this.running.run(purchaseId, async () => {
      const history = (await this.store.readStream(purchaseStream(purchaseId), 0)) as unknown as PurchaseEvent[];
      const purchase = fold(purchaseDecider, history);
      if (
        purchase.status !== 'fulfilled' ||
        purchase.partnerId !== partnerId ||
        purchase.kind !== 'card' ||
        !purchase.gift ||
        purchase.gift.mailed
      )
        return 'nothing';
      const { deal, gift } = (history[0] as PurchaseReserved).data;
      if (!gift) return 'nothing';
      if (gift.deliverAt !== null && Date.parse(gift.deliverAt) > this.clock.now().getTime()) return 'early';
      // A refund still pending may yet fail and leave its coupons the recipient's: its end arms this again (`RefundSteps`).
      if (purchase.refunds.some((refund) => refund.state === 'pending')) return 'waiting';
      // What a refund took back is not given (nothing, when it took the whole gift).
      const refunded = new Set(purchase.refunds.filter((refund) => refund.state === 'succeeded').flatMap((refund) => refund.couponIds));
      const couponIds = purchase.couponIds.filter((id) => !refunded.has(id));
      // The name is null once the recipient was erased: their key is gone.
      const mail =
        gift.name === null ? null : { name: gift.name, dealTitle: deal.title, message: gift.message, coupons: this.coupons(couponIds) };
      const outcome: Outcome = couponIds.length
        ? await this.send(partnerId, purchaseId, { recipient: gift.userId, mail })
        : { outcome: 'not_sent', reason: 'refunded before its delivery' };
      await this.record(purchaseId, partnerId, outcome);
      this.logger.log(`purchase ${purchaseId}: its gift's mail ${outcome.outcome}`);
      return outcome.outcome;
    });
  }

  private async send(
    partnerId: string,
    purchaseId: string,
    { recipient, mail }: { recipient: string; mail: GiftMail | null },
  ): Promise<Outcome> {
    const user = await this.accounts.user(partnerId, recipient);
    if (!user || !mail) return { outcome: 'not_sent', reason: 'the recipient was deleted or erased' };
    try {
      const outcome = await this.mail.send(partnerId, recipient, giftEmail(mail, user.profile.email, `<gift-${purchaseId}@deals-service>`));
      return { outcome, reason: null };
    } catch (error) {
      // Refused for good (5xx, a sandbox's outbox full for the day): given up (the server's words may
      // name the address: not recorded); else the scheduler tries again.
      if (error instanceof MailNotSent && error.permanent)
        return { outcome: 'not_sent', reason: `refused for good${error.responseCode === null ? '' : ` (${error.responseCode})`}` };
      throw error;
    }
  }

  private coupons(couponIds: readonly string[]): GiftMail['coupons'] {
    const base = this.links.apiBaseUrl;
    return couponIds.map((id) => ({ id, url: `${base}/coupons/${id}/print?key=${this.links.keyOf(id)}` }));
  }

  private async record(purchaseId: string, partnerId: string, { outcome, reason }: Outcome): Promise<void> {
    await handleCommand(
      this.store,
      purchaseStream(purchaseId),
      purchaseDecider,
      { type: 'RecordGiftMail', data: { purchaseId, partnerId, outcome, reason } },
      { now: this.clock.now(), metadata: { ...OPERATOR, partnerId } },
    );
  }
}
