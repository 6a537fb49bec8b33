import { defineProjection } from './projection';
import type { ViewDocument } from './ports/view-store.port';
import { RequestWrites } from './read-your-writes';

const pos = (n: number) => String(n).padStart(20, '0');

interface Order extends ViewDocument {
  lines: number;
  paid: boolean;
}

const orders = defineProjection<Order>({
  name: 'orders',
  handles: ['OrderOpened', 'LineAdded', 'OrderPaid'],
  indexes: [],
  documentIds: (event) => [(event.data as { orderId: string }).orderId],
  evolve(view, event, id) {
    switch (event.type) {
      case 'OrderOpened':
        return { _id: id, _pos: event.position, lines: 0, paid: false };
      case 'LineAdded':
        return view && { ...view, lines: view.lines + 1 };
      case 'OrderPaid':
        return view && { ...view, paid: true };
      default:
        return null;
    }
  },
});

describe('RequestWrites: the documents a request made, from its own events', () => {
  it('keeps nothing until asked, then folds the documents from nothing, stamped with the last write that changed each', () => {
    const writes = new RequestWrites();
    writes.note(pos(1), [{ type: 'OrderOpened', data: { orderId: 'a' } }]);
    writes.keepEvents();
    expect(writes.documentsWritten(orders, ['a']).size).toBe(0);
    writes.note(
      pos(4),
      [
        { type: 'OrderOpened', data: { orderId: 'b' } },
        { type: 'LineAdded', data: { orderId: 'b' } },
      ],
      'order-b',
    );
    writes.note(pos(6), [{ type: 'OrderOpened', data: { orderId: 'c' } }], 'order-c');
    writes.note(
      pos(9),
      [
        { type: 'LineAdded', data: { orderId: 'b' } },
        { type: 'OrderPaid', data: { orderId: 'b' } },
      ],
      'order-b',
    );
    expect(writes.documentsWritten(orders, ['b'])).toEqual(new Map([['b', { _id: 'b', _pos: pos(9), lines: 2, paid: true }]]));
    expect(writes.documentsWritten(orders, ['b', 'c']).get('c')).toEqual({ _id: 'c', _pos: pos(6), lines: 0, paid: false });
    // Still noted by type for the views to wait for.
    expect(writes.positions.get('OrderOpened')).toBe(pos(6));
  });

  it('makes no document the request did not open: its earlier events are not here', () => {
    const writes = new RequestWrites();
    writes.keepEvents();
    writes.note(pos(3), [{ type: 'OrderPaid', data: { orderId: 'old' } }]);
    expect(writes.documentsWritten(orders, ['old']).size).toBe(0);
  });
});
