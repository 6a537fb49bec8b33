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
  const inline = new InlineProjections([orders]);
  /** What a request keeps of a unit's folds once written at `at` (`written`: the keys its write wrote). */
  const kept = (folded: Map<string, Folded>, at: string, written: string[] = [...folded.keys()]) =>
    new Map([...folded].map(([key, { doc }]) => [key, { doc: { ...doc, _pos: at }, written: written.includes(key) }]));

  it('folds a document its events begin from nothing, to be written only where none is stored', () => {
    const touched = new Set<string>();
    const views = inline.fold([event('OrderOpened', 'a'), event('LineAdded', 'a')], new Map(), touched, null);
    expect(views).toEqual([{ collection: 'orders', documents: [{ doc: doc('a', 1), base: null }] }]);
    expect([...touched]).toEqual(['orders a']);
  });

  it('folds nothing onto a document no unit of the request began (its run folds it)', () => {
    expect(inline.fold([event('LineAdded', 'old')], new Map(), new Set(), new Map())).toEqual([]);
  });

  it('rests a later unit of the request on the document its earlier unit wrote, over that document only', () => {
    const first = new Map<string, Folded>();
    inline.fold([event('OrderOpened', 'a')], first, new Set(), null);
    const views = inline.fold([event('LineAdded', 'a'), event('OrderPaid', 'a')], new Map(), new Set(), kept(first, pos(4)));
    expect(views).toEqual([{ collection: 'orders', documents: [{ doc: doc('a', 1, true), base: pos(4) }] }]);
  });

  it('folds onto a document the request folded and did not write, for its answer, but writes nothing over an unknown stored one', () => {
    const first = new Map<string, Folded>();
    inline.fold([event('OrderOpened', 'a')], first, new Set(), null);
    const second = new Map<string, Folded>();
    expect(inline.fold([event('LineAdded', 'a')], second, new Set(), kept(first, pos(4), []))).toEqual([]);
    expect(second.get('orders a')).toEqual({ doc: doc('a', 1), base: undefined });
  });

  it('rests a later unit of the same batch on what an earlier one folded, on the same stored base', () => {
    const opened = new Map<string, Folded>();
    inline.fold([event('OrderOpened', 'a')], opened, new Set(), null);
    const batch = new Map<string, Folded>();
    inline.fold([event('LineAdded', 'a')], batch, new Set(), kept(opened, pos(2)));
    const views = inline.fold([event('LineAdded', 'a')], batch, new Set(), null);
    expect(views).toEqual([{ collection: 'orders', documents: [{ doc: doc('a', 2), base: pos(2) }] }]);
  });
});
