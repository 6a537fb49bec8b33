import { CannotFulfil, CannotFulfilReseller, LogPosition, NotFound, ValidationFailed } from '@deals/kernel';
import { workflowSpec } from '@deals/testing';
import { DealSnapshot } from '../purchase/purchase.events';
import { ResaleClaimSuperseded, ResaleTerms } from '../purchase/resale-claim';
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
const held: Input = { type: 'ResaleUnitsHeld', data: none };
const marked: Input = { type: 'ResaleMarkedSelling', data: none };
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
  it('claims the reference with what it asks for, holds the units, marks the claim selling, reserves, then sells', () => {
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
      .then([{ type: 'HoldResaleUnits', data: { dealId: 'd1', holdId: 'p1', quantity: 2 } }]);
    given(requested(), claimed)
      .when(held)
      .then([{ type: 'MarkResaleSelling', data: onReference('p1') }]);
    given(requested(), claimed, held)
      .when(marked)
      .then([
        {
          type: 'ReserveResale',
          data: {
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
      ]);
    given(requested(), claimed, held, marked)
      .when(reserved)
      .then([{ type: 'ReadPurchase', data: { purchaseId: 'p1' } }]);
  });

  it('records the sale with this body’s terms and answers it sold once its coupons are issued', () => {
    const read: Input = { type: 'PurchaseRead', data: { deal: snapshot('d1'), quantity: 2, holdId: 'p1', sold: null } };
    const started = [requested(), claimed, held, marked, reserved];
    given(...started)
      .when(read)
      .thenAsks('DrawCouponImages', 'SellUnits');
    given(...started, read)
      .when({ type: 'UnitsSold', data: { holdId: 'p1' } })
      .then([
        {
          type: 'RecordSale',
          data: {
            kind: 'resale',
            data: { purchaseId: 'p1', partnerId: 'P', transactionReference: 'tx-1', ...asked },
            holdId: 'p1',
          },
        },
        { type: 'DisarmHoldRelease', data: { holdId: 'p1' } },
      ]);
    const recorded: Input = { type: 'SaleRecorded', data: { position: at(5), couponIds: ['p1-1', 'p1-2'], userId: null } };
    const state = given(...started, read, { type: 'UnitsSold', data: { holdId: 'p1' } }, recorded)
      .when({ type: 'CouponsIssued', data: { position: at(6) } })
      .then([]);
    expect(state.answer).toEqual({ outcome: 'sold', purchaseId: 'p1', position: at(6) });
  });
});

describe('purchase workflow: a repeat of a reseller’s sale', () => {
  it('completes a first sale whose purchase is written, with the first’s terms, not this body’s', () => {
    given(requested())
      .when(claimedBefore(true, { dealId: 'd2', quantity: 1, terms: firsts }))
      .then([{ type: 'ReadPurchase', data: { purchaseId: 'p0' } }]);
    const read: Input = { type: 'PurchaseRead', data: { deal: snapshot('d2'), quantity: 1, holdId: 'p0', sold: null } };
    const { commands } = given(requested(), claimedBefore(true, { dealId: 'd2', quantity: 1, terms: firsts }), read)
      .when({ type: 'UnitsSold', data: { holdId: 'p0' } })
      .thenAsks('RecordSale', 'DisarmHoldRelease');
    expect(commands[0].data).toMatchObject({ kind: 'resale', data: { purchaseId: 'p0', ...firsts }, holdId: 'p0' });
  });

  it('sells a first sale still being recorded with its own deal, quantity and terms, its deal read again', () => {
    const first = claimedBefore(false, { dealId: 'd2', quantity: 1, terms: firsts });
    given(requested())
      .when(first)
      .then([{ type: 'CheckResaleDeal', data: { dealId: 'd2', quantity: 1 } }]);
    given(requested(), first)
      .when({ type: 'ResaleDealChecked', data: { deal: sellable('d2') } })
      .then([{ type: 'HoldResaleUnits', data: { dealId: 'd2', holdId: 'p0', quantity: 1 } }]);
    const { commands } = given(requested(), first, { type: 'ResaleDealChecked', data: { deal: sellable('d2') } }, held)
      .when(marked)
      .thenAsks('ReserveResale');
    expect(commands[0].data).toMatchObject({ purchaseId: 'p0', deal: snapshot('d2'), quantity: 1, holdId: 'p0' });
  });

  it('takes this body’s deal, quantity and terms where an old claim names none', () => {
    given(requested())
      .when(claimedBefore(false))
      .then([{ type: 'CheckResaleDeal', data: { dealId: 'd1', quantity: 2 } }]);
  });

  it('gives the reference up when the first sale’s deal is gone, and answers that it was not found', () => {
    const state = given(requested(), claimedBefore(false, { dealId: 'd9', quantity: 1, terms: firsts }))
      .when({ type: 'ResaleDealChecked', data: { deal: null } })
      .then([giveUp('p0', 'deal d9 not found')]);
    expect(state.answer).toEqual({ outcome: 'refused', error: new NotFound('deal d9 not found') });
  });
});

describe('purchase workflow: a reseller’s sale refused, and its undo', () => {
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

  it('releases the units just held when the claim was given up meanwhile, and answers that (the request starts again)', () => {
    const error = new ResaleClaimSuperseded('the claim of p1 was given up');
    const superseded: Input = { type: 'ReferenceClaimSuperseded', data: { error } };
    const state = given(requested(), claimed, held)
      .when(superseded)
      .then([{ type: 'ReleaseHold', data: { dealId: 'd1', holdId: 'p1', reason: 'refused' } }]);
    expect(state.answer).toEqual({ outcome: 'failed', error });
    const released = given(requested(), claimed, held, superseded).when({ type: 'HoldReleased', data: none }).then([]);
    expect(released.answer).toEqual({ outcome: 'failed', error });
    const unreleased = new Error('store away');
    const stuck = given(requested(), claimed, held, superseded).when(failed('ReleaseHold', unreleased)).then([]);
    expect(stuck.answer).toEqual({ outcome: 'failed', error: unreleased });
  });

  it('undoes nothing for a failure after the hold: the hold lapses, and recovery releases a hold with no purchase', () => {
    const error = new Error('disk I/O error');
    expect(given(requested(), claimed, held).when(failed('MarkResaleSelling', error)).then([]).answer).toEqual({
      outcome: 'failed',
      error,
    });
    expect(given(requested(), claimed, held, marked).when(failed('ReserveResale', error)).then([]).answer).toEqual({
      outcome: 'failed',
      error,
    });
  });

  it('keeps the reference for a hold that fails otherwise than for want of units', () => {
    const invalid = new ValidationFailed([]);
    const state = given(requested(), claimed)
      .when({ type: 'StepRefused', data: { step: 'HoldResaleUnits', error: invalid } })
      .then([]);
    expect(state.answer).toEqual({ outcome: 'refused', error: invalid });
    expect(given(requested()).when(failed('ClaimTransactionReference')).then([]).answer).toMatchObject({ outcome: 'failed' });
  });
});
