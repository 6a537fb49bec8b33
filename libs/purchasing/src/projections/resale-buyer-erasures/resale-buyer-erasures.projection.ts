import { defineProjection, ViewDocument } from '@deals/kernel';
import type { ResaleBuyerErased } from '../../domain/purchase/purchase.events';
import { resaleBuyerSubject } from '../../domain/purchase/resale-buyer';

/** "Which reseller sales' buyers were erased, and whose keys were they?" (by purchase id). */
export interface ResaleBuyerErasure extends ViewDocument {
  partnerId: string;
  /** The key's owner in the key store: the partner's transaction. */
  subject: string;
  erasedAt: string;
  by: 'partner' | 'operator';
}

export const RESALE_BUYER_ERASURES = 'resale_buyer_erasures';

export const resaleBuyerErasuresProjection = defineProjection<ResaleBuyerErasure>({
  name: RESALE_BUYER_ERASURES,
  handles: ['ResaleBuyerErased'],
  indexes: [{ keys: { erasedAt: 1 } }],
  documentIds: (event) => [(event.data as ResaleBuyerErased['data']).purchaseId],
  evolve(view, recorded, id) {
    const { partnerId, transactionReference, erasedAt, by } = recorded.data as ResaleBuyerErased['data'];
    return (
      view ?? { _id: id, _pos: recorded.position, partnerId, subject: resaleBuyerSubject(partnerId, transactionReference), erasedAt, by }
    );
  },
});
