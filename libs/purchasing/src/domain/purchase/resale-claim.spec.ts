import { deciderSpec } from '@deals/testing';
import { ResaleClaimSuperseded, TransactionReferenceEvent, transactionReferenceDecider, transactionReferenceStream } from './resale-claim';

const given = deciderSpec(transactionReferenceDecider);
const claim = (purchaseId: string) => ({
  type: 'ClaimTransactionReference' as const,
  data: { partnerId: 'a', transactionReference: 'tx', purchaseId },
});
const claimed = (purchaseId: string): TransactionReferenceEvent => ({ type: 'TransactionReferenceClaimed', data: claim(purchaseId).data });
const selling = (purchaseId: string) => ({ type: 'MarkResaleSelling' as const, data: { purchaseId } });
const release = (purchaseId: string) => ({
  type: 'ReleaseTransactionReference' as const,
  data: { purchaseId, reason: 'the deal is sold out' },
});
const released = (purchaseId: string): TransactionReferenceEvent => ({
  type: 'TransactionReferenceReleased',
  data: release(purchaseId).data,
});

describe('transaction reference claim', () => {
  it('goes to the first purchase, and a repeat records nothing', () => {
    given([])
      .when(claim('p1'))
      .then([claimed('p1')]);
    given([claimed('p1')])
      .when(claim('p2'))
      .then([]);
  });
  it('is marked selling once its units are held; marking it again records nothing', () => {
    given([claimed('p1')])
      .when(selling('p1'))
      .then([{ type: 'TransactionReferenceSelling', data: { purchaseId: 'p1' } }]);
    given([claimed('p1'), { type: 'TransactionReferenceSelling', data: { purchaseId: 'p1' } }])
      .when(selling('p1'))
      .then([]);
  });
  it('is given up when its sale is refused, and is then free for a new sale', () => {
    given([claimed('p1')])
      .when(release('p1'))
      .then([released('p1')]);
    given([claimed('p1'), released('p1')])
      .when(claim('p2'))
      .then([claimed('p2')]);
  });
  it('of a refusal and a hold that race, the first written wins', () => {
    // The hold came first: the refusal gives up nothing.
    given([claimed('p1'), { type: 'TransactionReferenceSelling', data: { purchaseId: 'p1' } }])
      .when(release('p1'))
      .then([]);
    // The refusal came first: the hold's request is told to give its units back.
    given([claimed('p1'), released('p1')])
      .when(selling('p1'))
      .thenThrows(ResaleClaimSuperseded);
    given([claimed('p1'), released('p1'), claimed('p2')])
      .when(selling('p1'))
      .thenThrows(ResaleClaimSuperseded);
    given([claimed('p2')])
      .when(release('p1'))
      .then([]);
  });
  it('is kept per partner', () => expect(transactionReferenceStream('a', 'tx')).not.toBe(transactionReferenceStream('b', 'tx')));
});
