import { AccountQueries, createUserBody, RegisterUser, USER_ACCOUNTS, UserWrites } from '@deals/accounts';
import { SaveDeal, saveDealBody, subscribeBody, SubscribeUser } from '@deals/engagement';
import { EventStore, PartnerCaller, ValidationFailed, ViewProgress } from '@deals/kernel';
import { couponStream, RedeemCoupon } from '@deals/purchasing';
import { errorAnswer, errorBody, validationIssues } from '@deals/wire';
import { Injectable, Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { SINGLE_CALL_BODY_LIMIT } from '../domain/bulk-job.decider';
import type { BulkItemResult, BulkJobKind } from '../domain/bulk-job.events';

/** What a single call answers a body larger than it takes ({@link SINGLE_CALL_BODY_LIMIT}). */
export const TOO_LARGE = { status: 413, body: { ...errorBody('bad_request', 'Request body is too large') } };

/** One item to run: its fields as sent, where it stands in its job, and whose it is. */
export interface BulkItem {
  jobId: string;
  index: number;
  fields: Record<string, unknown>;
  caller: PartnerCaller;
}

/** What an item did, when it was not refused. */
interface ItemDone {
  status: 'succeeded' | 'matched';
  resourceId: string;
}

/** The item's fields, without `reference` (the job's, not the call's), parsed as the single call parses its own; a failure is the call's 422. */
function parsed<S extends z.ZodType>(schema: S, fields: Record<string, unknown>, resource: string): z.output<S> {
  const result = schema.safeParse(fields);
  if (!result.success) throw new ValidationFailed(validationIssues(result.error, schema, resource));
  return result.data;
}

const idField = (resource: string, field: string) =>
  z
    .object({ [field]: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(200, 'must be at most 200 characters') })
    .meta({ 'x-resource': resource });

/** The user_id and coupon_id a single call takes in its path, a bulk item in its fields. */
const userIdField = idField('user', 'user_id');
const couponIdField = idField('coupon', 'coupon_id');

/** Splits the path fields (`names`) from the body's. */
function split(fields: Record<string, unknown>, names: readonly string[]) {
  const path: Record<string, unknown> = {};
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) (names.includes(name) ? path : body)[name] = value;
  return { path, body };
}

/**
 * Runs a bulk job's items through the commands of the single calls they stand for, each parsed by
 * the call's own request schema and answered as the call would be: done (with the record it made,
 * matched or acted on), or refused with the call's status and error body. An item run again (its
 * chunk's results lost with a process) finds what its first run did: a user under an id of the
 * item's own, a redemption under a request id of the item's own; a saved deal or subscription is
 * the same one saved again.
 */
@Injectable()
export class BulkItems {
  private readonly logger = new Logger('BulkJobs');

  constructor(
    private readonly commands: CommandBus,
    private readonly users: UserWrites,
    private readonly accounts: AccountQueries,
    private readonly progress: ViewProgress,
    private readonly store: EventStore,
  ) {}

  /**
   * Runs one item. A fault of the service (a 5xx: a store away) is thrown, so that the item's chunk
   * runs again; on the chunk's last run (`lastRun`) it is the item's result instead, with the body
   * the single call would answer.
   */
  async run(kind: BulkJobKind, item: BulkItem, lastRun = false): Promise<Pick<BulkItemResult, 'status' | 'resourceId' | 'error'>> {
    const { reference: _reference, ...fields } = item.fields;
    // Larger than the single call takes: refused as its body would be.
    if (Buffer.byteLength(JSON.stringify(fields)) > SINGLE_CALL_BODY_LIMIT) return { status: 'failed', resourceId: null, error: TOO_LARGE };
    const caller: PartnerCaller = { ...item.caller, requestId: itemRequestId(item) };
    try {
      const done = await this.runKind(kind, fields, { ...item, caller });
      return { ...done, error: null };
    } catch (error) {
      const { status, body } = errorAnswer(error);
      if (status >= 500) {
        if (!lastRun) throw error;
        this.logger.error(`bulk job ${item.jobId}: item ${item.index} failed on its chunk's last run: ${String(error)}`);
      }
      return { status: 'failed', resourceId: null, error: { status, body: body as unknown as Record<string, unknown> } };
    }
  }

  private runKind(kind: BulkJobKind, fields: Record<string, unknown>, item: BulkItem): Promise<ItemDone> {
    switch (kind) {
      case 'users':
        return this.user(fields, item);
      case 'saved_deals':
        return this.savedDeal(fields, item);
      case 'subscriptions':
        return this.subscription(fields, item);
      case 'coupon_redemptions':
        return this.redemption(fields, item);
    }
  }

  /** POST /users, or the live user who holds the email already (matched, nothing changed). */
  private async user(fields: Record<string, unknown>, { caller, jobId, index }: BulkItem): Promise<ItemDone> {
    const user = parsed(createUserBody, fields, 'user');
    const own = itemUserId(jobId, index);
    const { partnerId } = caller;
    const holder = await this.liveOwner(partnerId, user.profile.email);
    if (holder) return { status: holder === own ? 'succeeded' : 'matched', resourceId: holder };
    try {
      const { userId } = await this.commands.execute(new RegisterUser(user, true, caller, own));
      return { status: 'succeeded', resourceId: userId };
    } catch (error) {
      // Its first run made it, or another call is registering the same email at this moment.
      if (!(error instanceof ValidationFailed) || !error.issues.some((i) => i.field === 'email' || i.field === 'id')) throw error;
      const other = await this.users.ownerOnceRegistered(partnerId, user.profile.email);
      if (other === own) return { status: 'succeeded', resourceId: own };
      if (!other || !(await this.live(partnerId, other))) throw error;
      return { status: 'matched', resourceId: other };
    }
  }

  /** The live user of the partner who holds `email`, if any (the log says who holds it; the view, whether it is deleted). */
  private async liveOwner(partnerId: string, email: string): Promise<string | null> {
    const owner = await this.users.owner(partnerId, email);
    return owner && (await this.live(partnerId, owner)) ? owner : null;
  }

  private async live(partnerId: string, userId: string): Promise<boolean> {
    if (await this.accounts.user(partnerId, userId)) return true;
    // Registered a moment ago: the view may not show it yet.
    await this.progress.waitFor([USER_ACCOUNTS], await this.store.head());
    return (await this.accounts.user(partnerId, userId)) !== null;
  }

  /** POST /saved_deals. */
  private async savedDeal(fields: Record<string, unknown>, { caller }: BulkItem): Promise<ItemDone> {
    const body = parsed(saveDealBody, fields, 'saved_deal');
    if (!body.user_id)
      throw new ValidationFailed([{ type: 'missing_field', resource: 'saved_deal', field: 'user_id', message: 'is required' }]);
    const { savedDealId } = await this.commands.execute(new SaveDeal(body.user_id, body.deal_id, caller));
    return { status: 'succeeded', resourceId: savedDealId };
  }

  /** POST /users/:user_id/subscriptions. */
  private async subscription(fields: Record<string, unknown>, { caller }: BulkItem): Promise<ItemDone> {
    const { path, body } = split(fields, ['user_id']);
    const { user_id: userId } = parsed(userIdField, path, 'subscription') as { user_id: string };
    const { zip, source } = parsed(subscribeBody, body, 'subscription');
    const { subscriptionId } = await this.commands.execute(new SubscribeUser(userId, zip, source, caller));
    return { status: 'succeeded', resourceId: subscriptionId };
  }

  /** PUT /coupons/:coupon_id/redeem, or PUT /users/:user_id/coupons/:coupon_id/redeem with a user_id. */
  private async redemption(fields: Record<string, unknown>, { caller }: BulkItem): Promise<ItemDone> {
    const { path, body } = split(fields, ['coupon_id']);
    const { coupon_id: couponId } = parsed(couponIdField, path, 'coupon') as { coupon_id: string };
    const { user_id: userId } = parsed(userIdField.partial(), body, 'coupon') as { user_id?: string };
    try {
      await this.commands.execute(new RedeemCoupon(couponId, userId, caller));
    } catch (error) {
      // Redeemed by this item's first run: done, not refused.
      if (!(await this.redeemedBy(couponId, caller.requestId!))) throw error;
    }
    return { status: 'succeeded', resourceId: couponId };
  }

  private async redeemedBy(couponId: string, requestId: string): Promise<boolean> {
    const events = await this.store.readStream(couponStream(couponId));
    return events.some((event) => event.type === 'CouponRedeemed' && event.metadata.requestId === requestId);
  }
}

/** The request id an item's writes carry: the same each time the item is run. */
export const itemRequestId = ({ jobId, index }: Pick<BulkItem, 'jobId' | 'index'>) => `bulk-${jobId}-${index}`;

/** The id a users item registers its user under (UUID form, as a user's id): the same each time the item is run. */
export function itemUserId(jobId: string, index: number): string {
  const hex = createHash('sha256').update(`bulk-job-user\n${jobId}\n${index}`).digest('hex');
  // RFC 9562's version 8 (made by the application) and its variant bits.
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
