import { splitGeo } from './geo-in-process';

const near = { $geoWithin: { $centerSphere: [[-73.9855, 40.758], 10 / 3963.2] } };
const at = (lng: number, lat: number) => ({ _id: 'd', _pos: '1', locs: [{ type: 'Point', coordinates: [lng, lat] }] });
const manhattan = at(-73.9855, 40.758);
const philadelphia = at(-75.1652, 39.9526);

describe('MongoViewStore: $geoWithin answered in this process, the rest of the filter by the server', () => {
  it('sends a filter without $geoWithin as it is', () => {
    const filter = { state: 'in-flight', $or: [{ price: { $lt: 5 } }, { price: 9 }] };
    expect(splitGeo(filter)).toEqual({ server: filter, local: null, localFields: [] });
  });

  it('sends the conjuncts without $geoWithin, at the top and in $and, and tests the rest here', () => {
    const split = splitGeo({ state: 'in-flight', $and: [{ locs: near }, { price: { $lt: 5 } }] });
    expect(split.server).toEqual({ $and: [{ state: 'in-flight' }, { price: { $lt: 5 } }] });
    expect(split.localFields).toEqual(['locs']);
    expect([manhattan, philadelphia].map((doc) => split.local!(doc))).toEqual([true, false]);
  });

  it("keeps a field's other operators on the server", () => {
    const split = splitGeo({ locs: { ...near, $exists: true } });
    expect(split.server).toEqual({ locs: { $exists: true } });
    expect(split.local!(manhattan)).toBe(true);
  });

  it('tests here, whole, a disjunction holding $geoWithin, sending nothing of it', () => {
    const split = splitGeo({ $or: [{ locs: near }, { online: true }], state: 'in-flight' });
    expect(split.server).toEqual({ state: 'in-flight' });
    expect(split.localFields).toEqual(['locs', 'online']);
    expect([philadelphia, { ...philadelphia, online: true }, manhattan].map((doc) => split.local!(doc))).toEqual([false, true, true]);
  });

  it('names no fields where an operator reads the whole document', () => {
    expect(splitGeo({ $or: [{ locs: near }, { $expr: { $gt: ['$a', '$b'] } }] }).localFields).toBeNull();
  });
});
