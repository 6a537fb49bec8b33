import type { ErrorBody } from '@deals/wire';
import type { z } from 'zod';
import type { ResellerNotCancelled } from './purchasing.answers';

/**
 * A 422 of the coupon cancel made before the coupon is looked at (an `Idempotency-Key` used for
 * another request, a kept answer not sent again, a request whose text or body is refused), in the
 * reseller coupon error body its clients read: the reasons in `errors.coupons` (each problem found,
 * its field and rule, never the value given; else the refusal's message), with the error body's
 * `error_type`, `error_msg` and `answered_status` beside.
 */
export function asResellerNotCancelled(body: ErrorBody): z.output<typeof ResellerNotCancelled> {
  const reasons = body.errors?.length
    ? body.errors.map((issue) => (issue.field ? `${issue.field} ${issue.message}` : issue.message))
    : [body.error_msg];
  return {
    status: 'error',
    message: body.error_msg,
    code: '422',
    errors: { coupons: reasons },
    error_type: body.error_type,
    error_msg: body.error_msg,
    ...(typeof body.answered_status === 'number' ? { answered_status: body.answered_status } : {}),
  };
}
