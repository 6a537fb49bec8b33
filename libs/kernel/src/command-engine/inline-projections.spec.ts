import { defineProjection } from '../projection';
import type { ViewDocument } from '../ports/view-store.port';
import { Folded, InlineProjections, PENDING_POSITION, PendingEvent } from './inline-projections';

const pos = (n: number) => String(n).padStart(20, '0');

interface Order extends ViewDocument {
  lines: number;
  paid: boolean;
}

const orders = defineProjection<Order>({
  name: 'orders',
  handles: ['OrderOpened', 'LineAdded', 'OrderPaid'],
  indexes: [],
  inline: { bornOf: ['OrderOpened'] },
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

const event = (type: string, orderId: string): PendingEvent => ({ type, data: { orderId }, streamId: `order-${orderId}` });
const doc = (id: string, lines: number, paid = false, _pos = PENDING_POSITION) => ({ _id: id, _pos, lines, paid });

describe('InlineProjections: documents folded with each unit of work', () => {
  it('folds a document its events begin from nothing, to be written only where none is stored', () => {
    const inline = new InlineProjections([orders]);
    const folded = new Map<string, Folded>();
    const touched = new Set<string>();
    const views = inline.fold([event('OrderOpened', 'a'), event('LineAdded', 'a')], folded, touched);
    expect(views).toEqual([{ collection: 'orders', documents: [{ doc: doc('a', 1), base: null }] }]);
    expect([...touched]).toEqual(['orders a']);
  });

  it('folds nothing onto a document it does not know (its run folds it)', () => {
    const inline = new InlineProjections([orders]);
    expect(inline.fold([event('LineAdded', 'old')], new Map(), new Set())).toEqual([]);
    expect(inline.document(orders, 'old')).toBeNull();
  });

  it('rests the next unit on the document last written, over that document only', () => {
    const inline = new InlineProjections([orders]);
    const first = new Map<string, Folded>();
    inline.fold([event('OrderOpened', 'a')], first, new Set());
    inline.remember(first, pos(4), new Set(['orders a']));
    expect(inline.document(orders, 'a')).toEqual({ doc: doc('a', 0, false, pos(4)), written: true });
    const views = inline.fold([event('LineAdded', 'a'), event('OrderPaid', 'a')], new Map(), new Set());
    expect(views).toEqual([{ collection: 'orders', documents: [{ doc: doc('a', 1, true), base: pos(4) }] }]);
  });

  it('folds onto a document it folded and did not write, for an answer, but writes nothing over an unknown stored one', () => {
    const inline = new InlineProjections([orders]);
    const first = new Map<string, Folded>();
    inline.fold([event('OrderOpened', 'a')], first, new Set());
    inline.remember(first, pos(4), new Set());
    const second = new Map<string, Folded>();
    expect(inline.fold([event('LineAdded', 'a')], second, new Set())).toEqual([]);
    inline.remember(second, pos(7), new Set());
    expect(inline.document(orders, 'a')).toEqual({ doc: doc('a', 1, false, pos(7)), written: false });
  });

  it('rests a later unit of the same batch on what an earlier one folded, on the same stored base', () => {
    const inline = new InlineProjections([orders]);
    const opened = new Map<string, Folded>();
    inline.fold([event('OrderOpened', 'a')], opened, new Set());
    inline.remember(opened, pos(2), new Set(['orders a']));
    const batch = new Map<string, Folded>();
    inline.fold([event('LineAdded', 'a')], batch, new Set());
    const views = inline.fold([event('LineAdded', 'a')], batch, new Set());
    expect(views).toEqual([{ collection: 'orders', documents: [{ doc: doc('a', 2), base: pos(2) }] }]);
  });
});
