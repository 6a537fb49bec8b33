import { ValidationFailed } from '@deals/kernel';
import { parseV3Query, splitTopLevel } from './v3-query';

const issuesOf = (params: Record<string, unknown>) => {
  try {
    parseV3Query(params);
  } catch (error) {
    if (error instanceof ValidationFailed) return error.issues.map((i) => `${i.field}: ${i.message}`);
    throw error;
  }
  return [];
};

describe('v3 query language', () => {
  it('splits on top-level commas only', () => {
    expect(splitTopLevel('category[a,b],price<5,region_city[[Austin,TX],[Waco,TX]]')).toEqual([
      'category[a,b]',
      'price<5',
      'region_city[[Austin,TX],[Waco,TX]]',
    ]);
    expect(splitTopLevel('category[a,b')).toBeNull();
    expect(splitTopLevel('a],b')).toBeNull();
  });

  it('reads fields with sub-fields in brackets', () => {
    const { fields } = parseV3Query({ fields: 'id,title,images[small,large],locations' });
    expect([...fields!.entries()]).toEqual([
      ['id', null],
      ['title', null],
      ['images', ['small', 'large']],
      ['locations', null],
    ]);
    expect(parseV3Query({}).fields).toBeNull();
  });

  it('reads sorts, defaulting to end date descending', () => {
    expect(parseV3Query({}).sort).toEqual([{ attribute: 'end_at', field: 'endAt', direction: -1 }]);
    expect(parseV3Query({ sort: 'start_at(desc),title(asc)' }).sort).toEqual([
      { attribute: 'start_at', field: 'startAt', direction: -1 },
      { attribute: 'title', field: 'title', direction: 1 },
    ]);
  });

  it('reads every filter condition', () => {
    const { conditions } = parseV3Query({
      filter:
        'category[Food & Drink,Activities],subcategory[Spa],price>=100,price<5000,price[100,200],region[chicago],region_city[San%20Francisco,CA],region_city[[Austin,TX],[New York,ny]],lat_long[40.7,-74.0,2.5],sold_out[false]',
    });
    expect(conditions).toEqual([
      { name: 'category', values: ['Food & Drink', 'Activities'] },
      { name: 'subcategory', values: ['Spa'] },
      { name: 'price', operator: '>=', cents: 100 },
      { name: 'price', operator: '<', cents: 5000 },
      { name: 'price_in', cents: [100, 200] },
      { name: 'region', values: ['chicago'] },
      { name: 'region_city', places: [{ city: 'San Francisco', state: 'CA' }] },
      {
        name: 'region_city',
        places: [
          { city: 'Austin', state: 'TX' },
          { city: 'New York', state: 'NY' },
        ],
      },
      { name: 'lat_long', latitude: 40.7, longitude: -74, miles: 2.5 },
      { name: 'sold_out', value: false },
    ]);
  });

  it('names every malformed part and unknown attribute', () => {
    expect(
      issuesOf({
        fields: 'id,bogus,images[huge],title[x]',
        sort: 'price(up),colour(asc)',
        filter: 'colour[red],price<abc,lat_long[1,2],region_city[Austin]',
      }),
    ).toEqual([
      'fields: names an unknown attribute "bogus"',
      'fields: names an unknown sub-field "images[huge]"',
      'fields: attribute "title" has no sub-fields',
      'sort: must be attribute(asc) or attribute(desc), got "price(up)"',
      'sort: cannot sort on "colour"; sortable: id, title, start_at, end_at, price, value, num_left, number_sold, merchant_name, category, subcategory, region_id',
      'filter: names an unknown condition "colour"',
      'filter: price< needs whole cents, got "abc"',
      'filter: lat_long needs [latitude,longitude,radius_in_miles] in range, got "1,2"',
      'filter: region_city needs [city,ST] or [[city,ST],[city,ST]], got "Austin"',
    ]);
    expect(issuesOf({ filter: 'category[a,b' })).toEqual(['filter: is malformed: "category[a,b"']);
    expect(issuesOf({ fields: 'id,,title' })).toEqual(['fields: is malformed: "id,,title"']);
    expect(issuesOf({ filter: 'sold_out[maybe]' })).toEqual(['filter: sold_out needs [true] or [false]']);
    expect(issuesOf({ sort: ['a(asc)', 'b(asc)'] })).toEqual(['sort: must be given once, as text']);
  });
});
