import { CannotFulfil, CannotFulfilReseller, LogPosition, NotFound, ValidationFailed } from '@deals/kernel';
import { workflowSpec } from '@deals/testing';
import { DealSnapshot } from '../purchase/purchase.events';
import { ResaleClaimSuperseded, ResaleTerms } from '../purchase/resale-claim';
import { HoldLapsed } from '../inventory/inventory.decider';
import { PurchaseWorkflowCommand, PurchaseWorkflowInput, purchaseWorkflow } from './purchase.workflow';
import { ResoldDeal } from './resale-start';

type Input = PurchaseWorkflowInput;
const now = new Date('2026-06-15T12:00:00.000Z');
const given = workflowSpec(purchaseWorkflow, now);
const none = {} as Record<string, never>;
const at = (position: number): LogPosition => String(position).padStart(8, '0');

const snapshot = (dealId: string): DealSnapshot => ({
  dealId,
  title: 'Spa day',
  type: 'daily-deal',
  imageUrl: null,
  unitPrice: 4900,
  expiresAt: null,
  expirationDays: 30,
});
const sellable = (dealId = 'd1'): ResoldDeal => ({ snapshot: snapshot(dealId), refusal: null });
const asked: ResaleTerms = { amountCents: 9800, transactionDate: '2026-06-15T11:59:00Z', buyer: { first_name: 'Ray' } };
const firsts: ResaleTerms = { amountCents: 4500, transactionDate: '2026-06-14T09:00:00Z', buyer: { first_name: 'First' } };
const requested = (deal: ResoldDeal = sellable()): Input => ({
  type: 'ResaleRequested',
  data: { purchaseId: 'p1', partnerId: 'P', transactionReference: 'tx-1', dealId: 'd1', quantity: 2, terms: asked, deal },
});
const claimed: Input = { type: 'ReferenceClaimed', data: none };
const claimedBefore = (reserved: boolean, sale: Partial<{ dealId: string; quantity: number; terms: ResaleTerms }> = {}): Input => ({
  type: 'ReferenceClaimedBefore',
  data: { purchaseId: 'p0', dealId: null, quantity: null, terms: null, reserved, ...sale },
});
const reserved: Input = { type: 'ResaleReserved', data: none };
const onReference = (purchaseId: string) => ({ partnerId: 'P', transactionReference: 'tx-1', purchaseId });
const giveUp = (purchaseId: string, reason: string): PurchaseWorkflowCommand => ({
  type: 'ReleaseTransactionReference',
  data: { ...onReference(purchaseId), reason },
});
const failed = (step: PurchaseWorkflowCommand['type'], error = new Error('disk I/O error')): Input => ({
  type: 'StepFailed',
  data: { step, error },
});

describe('purchase workflow: a reseller’s new sale', () => {
  it('claims the reference with what it asks for, then holds the units, marks the claim selling and reserves in one write, then sells', () => {
    given()
      .when(requested())
      .then([
        {
          type: 'ClaimTransactionReference',
          data: { partnerId: 'P', transactionReference: 'tx-1', purchaseId: 'p1', dealId: 'd1', quantity: 2, terms: asked },
        },
      ]);
    given(requested())
      .when(claimed)
      .then([
        {
          type: 'StartResale',
          data: {
            hold: { dealId: 'd1', holdId: 'p1', quantity: 2 },
            mark: onReference('p1'),
            reserve: {
              purchaseId: 'p1',
              partnerId: 'P',
              deal: snapshot('d1'),
              quantity: 2,
              holdId: 'p1',
              reservedAt: '2026-06-15T12:00:00.000Z',
              holdExpiresAt: '2026-06-15T12:05:00.000Z',
              via: 'reseller',
              transactionReference: 'tx-1',
            },
          },
        },
      ]);
    given(requested(), claimed)
      .when(reserved)
      .then([{ type: 'ReadPurchase', data: { purchaseId: 'p1' } }]);
  });

  it('sells, records the sale with this body’s terms and issues its coupons in one write, and answers it sold', () => {
    const read: Input = { type: 'PurchaseRead', data: { deal: snapshot('d1'), quantity: 2, holdId: 'p1', sold: null } };
    const started = [requested(), claimed, reserved];
    const [, finish] = given(...started)
      .when(read)
      .thenAsks('DrawCouponImages', 'FinishSale').commands;
    expect(finish.data).toEqual({
      units: { purchaseId: 'p1', dealId: 'd1', holdId: 'p1', quantity: 2 },
      record: { kind: 'resale', data: { purchaseId: 'p1', partnerId: 'P', transactionReference: 'tx-1', ...asked }, holdId: 'p1' },
      issue: { purchaseId: 'p1', partnerId: 'P', deal: snapshot('d1'), couponIds: ['p1-1', 'p1-2'], userId: null },
      endCharge: null,
    });
    const state = given(...started, read)
      .when({ type: 'SaleWritten', data: { position: at(6) } })
      .then([]);
    expect(state.answer).toEqual({ outcome: 'sold', purchaseId: 'p1', position: at(6) });
  });

  it('sells fresh units in one write when its hold lapsed: held and sold, recorded and its coupons issued; refused again, gives up', () => {
    const read: Input = { type: 'PurchaseRead', data: { deal: snapshot('d1'), quantity: 2, holdId: 'p1', sold: null } };
    const lapsed: Input = { type: 'HoldLapsed', data: { error: new HoldLapsed() } };
    const started = [requested(), claimed, reserved, read];
    given(...started)
      .when(lapsed)
      .then([
        {
          type: 'FinishSale',
          data: {
            units: { purchaseId: 'p1', dealId: 'd1', holdId: 'p1-r', quantity: 2, fresh: true },
            record: { kind: 'resale', data: { purchaseId: 'p1', partnerId: 'P', transactionReference: 'tx-1', ...asked }, holdId: 'p1-r' },
            issue: { purchaseId: 'p1', partnerId: 'P', deal: snapshot('d1'), couponIds: ['p1-1', 'p1-2'], userId: null },
            endCharge: null,
          },
        },
      ]);
    const state = given(...started, lapsed)
      .when({ type: 'SaleWritten', data: { position: at(6) } })
      .then([]);
    expect(state.answer).toEqual({ outcome: 'sold', purchaseId: 'p1', position: at(6) });
    const soldOut = new CannotFulfil('the deal is sold out');
    const gone = given(...started, lapsed)
      .when({ type: 'UnitsGone', data: { error: soldOut } })
      .then([]);
    expect(gone.answer).toEqual({ outcome: 'refused', error: soldOut });
  });
});

describe('purchase workflow: a repeat of a reseller’s sale', () => {
  it('completes a first sale whose purchase is written, with the first’s terms, not this body’s', () => {
    given(requested())
      .when(claimedBefore(true, { dealId: 'd2', quantity: 1, terms: firsts }))
      .then([{ type: 'ReadPurchase', data: { purchaseId: 'p0' } }]);
    const read: Input = { type: 'PurchaseRead', data: { deal: snapshot('d2'), quantity: 1, holdId: 'p0', sold: null } };
    const [, finish] = given(requested(), claimedBefore(true, { dealId: 'd2', quantity: 1, terms: firsts }))
      .when(read)
      .thenAsks('DrawCouponImages', 'FinishSale').commands;
    expect(finish.data).toMatchObject({ record: { kind: 'resale', data: { purchaseId: 'p0', ...firsts }, holdId: 'p0' } });
  });

  it('sells a first sale still being recorded with its own deal, quantity and terms, its deal read again', () => {
    const first = claimedBefore(false, { dealId: 'd2', quantity: 1, terms: firsts });
    given(requested())
      .when(first)
      .then([{ type: 'CheckResaleDeal', data: { dealId: 'd2', quantity: 1 } }]);
    const [start] = given(requested(), first)
      .when({ type: 'ResaleDealChecked', data: { deal: sellable('d2') } })
      .thenAsks('StartResale').commands;
    expect(start.data).toMatchObject({
      hold: { dealId: 'd2', holdId: 'p0', quantity: 1 },
      reserve: { purchaseId: 'p0', deal: snapshot('d2'), quantity: 1, holdId: 'p0' },
    });
  });

  it('takes this body’s deal, quantity and terms where an old claim names none', () => {
    given(requested())
      .when(claimedBefore(false))
      .then([{ type: 'CheckResaleDeal', data: { dealId: 'd1', quantity: 2 } }]);
  });

  it('gives the reference up when the first sale’s deal is gone, and answers that it was not found', () => {
    const state = given(requested(), claimedBefore(false, { dealId: 'd9', quantity: 1, terms: firsts }))
      .when({ type: 'ResaleDealChecked', data: { deal: null } })
      .then([giveUp('p0', 'deal not found')]);
    expect(state.answer).toEqual({ outcome: 'refused', error: new NotFound('deal not found') });
  });
});

describe('purchase workflow: a reseller’s sale refused', () => {
  it('gives the reference up without holding when its deal is not sold now, and answers cannot_fulfill', () => {
    const state = given(requested({ snapshot: snapshot('d1'), refusal: 'the deal is not on sale' }))
      .when(claimed)
      .then([giveUp('p1', 'the deal is not on sale')]);
    expect(state.answer).toEqual({ outcome: 'refused', error: new CannotFulfilReseller('the deal is not on sale') });
    expect((state.answer as { error: Error }).error).toBeInstanceOf(CannotFulfilReseller);
    given(requested(), claimedBefore(false, { dealId: 'd1', quantity: 3 }))
      .when({ type: 'ResaleDealChecked', data: { deal: { snapshot: snapshot('d1'), refusal: 'at most 2 per user' } } })
      .then([giveUp('p0', 'at most 2 per user')]);
  });

  it('gives the reference up when the hold is refused, and answers cannot_fulfill', () => {
    const state = given(requested(), claimed)
      .when({ type: 'ResaleUnitsRefused', data: { error: new CannotFulfil('the deal is sold out') } })
      .then([giveUp('p1', 'the deal is sold out')]);
    expect(state.answer).toEqual({ outcome: 'refused', error: new CannotFulfilReseller('the deal is sold out') });
    const done = given(requested(), claimed, { type: 'ResaleUnitsRefused', data: { error: new CannotFulfil('the deal is sold out') } })
      .when({ type: 'ReferenceGivenUp', data: none })
      .then([]);
    expect(done.answer).toEqual(state.answer);
  });

  it('answers the failure to give the reference up rather than the refusal', () => {
    const error = new Error('store away');
    const state = given(requested(), claimed, { type: 'ResaleUnitsRefused', data: { error: new CannotFulfil('the deal is sold out') } })
      .when(failed('ReleaseTransactionReference', error))
      .then([]);
    expect(state.answer).toEqual({ outcome: 'failed', error });
  });

  it('answers a claim given up meanwhile as failed, with nothing written to undo (the request starts again)', () => {
    const error = new ResaleClaimSuperseded('the claim of p1 was given up');
    const state = given(requested(), claimed).when({ type: 'ReferenceClaimSuperseded', data: { error } }).then([]);
    expect(state.answer).toEqual({ outcome: 'failed', error });
  });

  it('answers a failed start as failed, undoing nothing (it was written whole or not at all)', () => {
    const error = new Error('disk I/O error');
    expect(given(requested(), claimed).when(failed('StartResale', error)).then([]).answer).toEqual({ outcome: 'failed', error });
  });

  it('keeps the reference for a hold that fails otherwise than for want of units', () => {
    const invalid = new ValidationFailed([]);
    const state = given(requested(), claimed)
      .when({ type: 'StepRefused', data: { step: 'StartResale', error: invalid } })
      .then([]);
    expect(state.answer).toEqual({ outcome: 'refused', error: invalid });
    expect(given(requested()).when(failed('ClaimTransactionReference')).then([]).answer).toMatchObject({ outcome: 'failed' });
  });
});
