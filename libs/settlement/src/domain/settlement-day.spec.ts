import { SettlementLineItem, statementCsv } from './settlement-day';

const HOSTILE = [
  "x;=cmd|' /C calc'!A0;",
  'a\n=1+1',
  'a\r\n+1',
  'a\r-1',
  '=SUM(A1:A9)',
  '@cmd',
  '-12',
  '+1',
  '\t=1',
  'a,=1',
  'a|@x',
  'say "hi";=2',
  'x;;=3',
];

const line = (reference: string, n: number): SettlementLineItem => ({
  lineId: `l${n}`,
  kind: 'card_transaction' as SettlementLineItem['kind'],
  reference,
  channel: null,
  at: '2026-06-15T12:00:00.000Z',
  position: String(n),
  grossCents: 0,
  refundCents: 0,
  incentiveCents: 100,
  incentiveReversedCents: 0,
  feeCents: 25,
  feeReversedCents: 0,
});

/** Cells as a spreadsheet reads them: RFC 4180 quoting, split on `separator`. */
function cells(csv: string, separator: string): string[] {
  const out: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < csv.length; i++) {
    const c = csv[i];
    if (quoted && c === '"' && csv[i + 1] === '"') {
      cell += '"';
      i++;
    } else if (c === '"') {
      quoted = !quoted;
    } else if (!quoted && (c === separator || c === '\n')) {
      out.push(cell);
      cell = '';
    } else {
      cell += c;
    }
  }
  return out;
}

const FORMULA_START = /^[=+\-@\t\r]/;

describe('the statement CSV', () => {
  const csv = statementCsv(HOSTILE.map(line));

  it.each([',', ';'])('runs no cell as a formula in a spreadsheet splitting on %j', (separator) => {
    const starting = cells(csv, separator).filter((cell) => FORMULA_START.test(cell));
    expect(starting).toEqual([]);
  });

  it('runs none either where a reader ignores quotes and splits at every separator and line break', () => {
    const pieces = csv.split(/[\r\n,;|\t]/).map((piece) => piece.replace(/^"+/, ''));
    expect(pieces.filter((piece) => /^[=+\-@]/.test(piece))).toEqual([]);
  });

  it('keeps every reference whole in one cell, read back with the quote marks only added', () => {
    const rows = cells(csv, ',');
    const width = 12;
    const references = HOSTILE.map((_, i) => rows[width * (i + 1) + 3]);
    expect(references.map((r) => r.replace(/'(?=[=+\-@\t\r])/g, ''))).toEqual(HOSTILE);
  });

  it('writes numbers bare and every other field quoted', () => {
    expect(csv.split('\n')[1]).toBe(`0,"l0","card_transaction","x;'=cmd|' /C calc'!A0;",,"2026-06-15T12:00:00.000Z",0,0,100,0,25,0`);
  });
});
