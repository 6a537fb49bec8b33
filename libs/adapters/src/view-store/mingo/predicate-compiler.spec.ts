import { Query } from 'mingo';
import { compileFilter } from './predicate-compiler';

/**
 * `$in` / `$nin` holding null or `{}` on a dotted path (the deals with units held) are compiled,
 * answered as mingo answers them: every combination of such values against every shape a document
 * may have along the path (missing, null, scalar, empty and other objects, arrays of each).
 */
describe('compiled $in / $nin with null and {} on a dotted path', () => {
  const held = [undefined, null, {}, { 1700: 1 }, 5, 'x', [], [{}], [null], [5], [{ 1: 1 }]];
  const docs = [
    {},
    { inventory: null },
    { inventory: 5 },
    { inventory: [] },
    { inventory: [{ held: {} }] },
    { inventory: [{ held: { 1: 1 } }, {}] },
    ...held.map((value) => ({ inventory: value === undefined ? {} : { held: value } })),
  ];
  const choices: unknown[] = [null, {}, 5, 'x'];
  const valueSets = Array.from({ length: 1 << choices.length }, (_, mask) => choices.filter((_, i) => mask & (1 << i)));

  it.each(['$in', '$nin'])('%s answers as mingo does', (op) => {
    for (const values of valueSets) {
      const filter = { 'inventory.held': { [op]: values } };
      const compiled = compileFilter(filter);
      const reference = new Query(filter);
      for (const doc of docs) expect([filter, doc, compiled.test(doc)]).toEqual([filter, doc, reference.test(doc)]);
    }
  });
});
