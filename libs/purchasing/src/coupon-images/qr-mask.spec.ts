import fc from 'fast-check';
import QRCode from 'qrcode';
import { couponCodes } from '../commands/purchase-steps/coupon-codes';
import { bestMaskLevelM, packedPenaltyOf, penalty, QrModules } from './qr-mask';
import { qrSymbol } from './qr-png';

const modulesOf = (symbol: QRCode.QRCode) => symbol.modules as unknown as QrModules;
/** qrcode's own symbol at level M: its segmentation, its choice of mask. */
const reference = (text: string) => QRCode.create(text, { errorCorrectionLevel: 'M' });
const sameModules = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

describe('bestMaskLevelM and qrSymbol', () => {
  it("give qrcode's own mask and symbol, module for module, for 2,000 coupons' redemption codes", () => {
    for (let n = 1; n <= 2000; n++) {
      const { redemptionCode } = couponCodes(`purchase-${n}-${n % 3}`, Buffer.alloc(32, 7));
      const expected = reference(redemptionCode);
      const fromMaskZero = QRCode.create(redemptionCode, { errorCorrectionLevel: 'M', maskPattern: 0 });
      const chosen = bestMaskLevelM(modulesOf(fromMaskZero), 0);
      expect([redemptionCode, chosen.mask]).toEqual([redemptionCode, expected.maskPattern]);
      expect([redemptionCode, sameModules(chosen.data, modulesOf(expected).data)]).toEqual([redemptionCode, true]);
      expect([redemptionCode, sameModules(qrSymbol(redemptionCode).data, modulesOf(expected).data)]).toEqual([redemptionCode, true]);
    }
  });

  /** qrSymbol equals qrcode's own symbol for every text the arbitrary makes. */
  const matchesQrcode = (texts: fc.Arbitrary<string>, numRuns: number) =>
    fc.assert(
      fc.property(texts, (text) => {
        expect(sameModules(qrSymbol(text).data, modulesOf(reference(text)).data)).toBe(true);
      }),
      { numRuns },
    );

  it('give the same for codes full of digit runs (where numeric segments can be shorter)', () => {
    matchesQrcode(fc.string({ unit: fc.constantFrom(...'0123456789ABZ $'), minLength: 1, maxLength: 40 }), 1000);
  });

  it('give the same for long capital-and-digit texts (versions up to 10 and beyond)', () => {
    matchesQrcode(fc.string({ unit: fc.constantFrom(...'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'), minLength: 40, maxLength: 300 }), 200);
  });

  it('give the same from a symbol made with any mask, for any text (byte mode, versions with version bits)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 160 }), fc.integer({ min: 0, max: 7 }), (text, used) => {
        const expected = reference(text);
        const made = QRCode.create(text, { errorCorrectionLevel: 'M', maskPattern: used as QRCode.QRCodeMaskPattern });
        const chosen = bestMaskLevelM(modulesOf(made), used);
        expect(chosen.mask).toBe(expected.maskPattern);
        expect(sameModules(chosen.data, modulesOf(expected).data)).toBe(true);
        expect(sameModules(qrSymbol(text).data, modulesOf(expected).data)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the packed penalty', () => {
  it('scores any matrix of any packed size as the module-by-module rules do', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 31 })
          .chain((size) => fc.tuple(fc.constant(size), fc.uint8Array({ min: 0, max: 1, minLength: size * size, maxLength: size * size }))),
        ([size, modules]) => packedPenaltyOf(modules, size) === penalty(modules, size),
      ),
      { numRuns: 20_000 },
    );
  });

  it('scores lines full of long runs and finder-like patterns as the module-by-module rules do', () => {
    // Matrices built from a few row patterns: long runs of one colour and 1:1:3:1:1 patterns are frequent.
    const rows = [
      '0000000000000000000000000',
      '1111111111111111111111111',
      '1011101000010111010000101',
      '0000101110100001011101000',
      '1111100000111110000011111',
    ];
    fc.assert(
      fc.property(fc.array(fc.nat({ max: rows.length - 1 }), { minLength: 21, maxLength: 25 }), fc.nat({ max: 4 }), (picks, cut) => {
        const size = picks.length;
        const modules = Uint8Array.from(picks.flatMap((p) => [...rows[p].repeat(2).slice(cut, cut + size)].map(Number)));
        return packedPenaltyOf(modules, size) === penalty(modules, size);
      }),
      { numRuns: 5_000 },
    );
  });
});
