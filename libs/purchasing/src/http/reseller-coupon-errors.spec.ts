import { errorBody } from '@deals/wire';
import { ResellerNotCancelled } from './purchasing.answers';
import { asResellerNotCancelled } from './reseller-coupon-errors';

describe('asResellerNotCancelled: a 422 of the coupon cancel in the reseller coupon error body', () => {
  it('gives each problem found as a reason (field and rule), the error body’s fields beside', () => {
    const refused = errorBody('validation_failed', 'coupon_id must be well-formed Unicode text without NUL', [
      { type: 'invalid', resource: 'request', field: 'coupon_id', message: 'must be well-formed Unicode text without NUL' },
      { type: 'invalid', resource: 'request', message: 'has a field name that is not well-formed' },
    ]);
    expect(asResellerNotCancelled(refused)).toEqual({
      status: 'error',
      message: 'coupon_id must be well-formed Unicode text without NUL',
      code: '422',
      errors: { coupons: ['coupon_id must be well-formed Unicode text without NUL', 'has a field name that is not well-formed'] },
      error_type: 'validation_failed',
      error_msg: 'coupon_id must be well-formed Unicode text without NUL',
    });
  });

  it("gives a refusal without problems listed as its message, with a kept answer's first status", () => {
    const notice = errorBody(
      'idempotent_answer_not_kept',
      'the request was carried out and answered 200, but its answer is not sent again',
      undefined,
      {
        answered_status: 200,
      },
    );
    const shaped = asResellerNotCancelled(notice);
    expect(shaped).toEqual({
      status: 'error',
      message: notice.error_msg,
      code: '422',
      errors: { coupons: [notice.error_msg] },
      error_type: 'idempotent_answer_not_kept',
      error_msg: notice.error_msg,
      answered_status: 200,
    });
    // What the description says the route answers, no field beside.
    expect(ResellerNotCancelled.strict().parse(shaped)).toEqual(shaped);
  });
});
