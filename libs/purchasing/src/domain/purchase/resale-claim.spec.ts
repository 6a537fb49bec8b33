import { deciderSpec } from '../../../../testing/src/decider-spec';
import { transactionReferenceDecider, transactionReferenceStream } from './resale-claim';

const given = deciderSpec(transactionReferenceDecider);
const claim = (purchaseId: string) => ({ type: 'ClaimTransactionReference' as const, data: { partnerId: 'a', transactionReference: 'tx', purchaseId } });

describe('transaction reference claim', () => {
  it('goes to the first purchase, and a repeat records nothing', () => {
    given([]).when(claim('p1')).then([{ type: 'TransactionReferenceClaimed', data: claim('p1').data }]);
    given([{ type: 'TransactionReferenceClaimed', data: claim('p1').data }]).when(claim('p2')).then([]);
  });
  it('is kept per partner', () => expect(transactionReferenceStream('a', 'tx')).not.toBe(transactionReferenceStream('b', 'tx')));
});
