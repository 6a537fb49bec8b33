import { unknownWords } from '@deals/kernel';
import { requestDto, withPaging } from '@deals/wire';
import { z } from 'zod';
import type { CouponFilterWord } from '../queries/purchase.queries';

/** GET /users/:user_id/purchases: `count`, `per_page`, `page`. */
export const purchaseListQuery = withPaging({}, 'purchase');
export class PurchaseListQuery extends requestDto(purchaseListQuery) {}

const WORDS: CouponFilterWord[] = ['valid', 'redeemed', 'expired'];

/** GET /users/:user_id/coupons: the filter words and `count`, `per_page`, `page`. */
export const couponListQuery = withPaging(
  {
    filter: z
      .string({ error: `takes words from ${WORDS.join(', ')}` })
      .optional()
      .transform((text, ctx): CouponFilterWord[] => {
        const words = text ? text.split(',').map((w) => w.trim()) : [];
        const unknown = words.filter((w) => !WORDS.includes(w as CouponFilterWord));
        if (unknown.length) {
          ctx.addIssue({ code: 'custom', message: `takes words from ${WORDS.join(', ')}; it has ${unknownWords(unknown)}` });
          return z.NEVER;
        }
        return words as CouponFilterWord[];
      })
      .meta({ description: `comma-separated words from ${WORDS.join(', ')}; none: every coupon`, example: 'valid,redeemed' }),
  },
  'coupon',
);
export class CouponListQuery extends requestDto(couponListQuery) {}

/**
 * The `key` of a coupon's public link (its QR image, its printable page). Anything but the link's
 * own key opens nothing (404, never 422: a wrong key tells nothing about the coupon).
 */
export const couponLinkQuery = z
  .object({
    key: z
      .unknown()
      .optional()
      .transform((value) => (typeof value === 'string' ? value : undefined))
      .meta({ type: 'string', description: 'the key the link (`qr_code_url`, `print_url`) carries' }),
  })
  .meta({ 'x-resource': 'coupon' });
export class CouponLinkQuery extends requestDto(couponLinkQuery) {}
