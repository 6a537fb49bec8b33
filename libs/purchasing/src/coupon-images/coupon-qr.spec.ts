import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { couponCodes } from '../commands/purchase-steps/coupon-codes';
import { CouponQr } from './coupon-qr';

/** Pixels a module and the quiet zone in modules, as the printable page sizes the image. */
const SCALE = 6;
const MARGIN = 2;

describe('CouponQr', () => {
  let qr: CouponQr;
  let made: jest.SpyInstance;
  beforeEach(() => {
    qr = new CouponQr();
    made = jest.spyOn(QRCode, 'toBuffer');
  });
  afterEach(() => made.mockRestore());

  const redemptionCode = couponCodes('purchase-7-1', Buffer.alloc(32, 7)).redemptionCode;

  it.each([redemptionCode, 'K7QX2M9PWD', 'A', 'https://deals.example/coupons/abc-1'])(
    'makes a PNG of exactly the QR symbol of %s (level M), scaled, with its quiet zone, that a scanner reads back',
    async (text) => {
      const png = await qr.png(text);
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      const image = PNG.sync.read(png);
      const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
      const size = (modules.size + 2 * MARGIN) * SCALE;
      expect([image.width, image.height]).toEqual([size, size]);
      for (let y = 0; y < size; y++) {
        for (let x = 0; x < size; x++) {
          const [mx, my] = [Math.floor(x / SCALE) - MARGIN, Math.floor(y / SCALE) - MARGIN];
          const dark = mx >= 0 && my >= 0 && mx < modules.size && my < modules.size && modules.get(my, mx) === 1;
          const offset = (y * size + x) * 4;
          expect([x, y, image.data[offset], image.data[offset + 3]]).toEqual([x, y, dark ? 0 : 255, 255]);
        }
      }
      expect(jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data).toBe(text);
    },
  );

  it('makes a code once, however often and whenever it is asked for', async () => {
    const [first, again] = await Promise.all([qr.png('SAME1'), qr.png('SAME1')]);
    expect(first).toBe(again);
    expect(await qr.png('SAME1')).toBe(first);
    expect(await qr.base64('SAME1')).toBe(first.toString('base64'));
    expect(made).toHaveBeenCalledTimes(1);
  });

  it('makes each code of many asked for together, each once', async () => {
    const codes = Array.from({ length: 12 }, (_, i) => `CODE${i}X7Q`);
    const images = await Promise.all([...codes, ...codes].map((code) => qr.png(code)));
    codes.forEach((code, i) => {
      expect(images[i]).toBe(images[i + codes.length]);
      const image = PNG.sync.read(images[i]);
      expect([code, jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data]).toEqual([code, code]);
    });
    expect(made).toHaveBeenCalledTimes(codes.length);
  });

  it('fails only the image that cannot be made, keeps no failure, and answers the others', async () => {
    const tooLong = 'X'.repeat(5000); // more than a QR symbol holds
    const [before, failed, after] = await Promise.allSettled([qr.png('FINE1'), qr.png(tooLong), qr.png('FINE2')]);
    expect(
      before.status === 'fulfilled' &&
        before.value.equals(await QRCode.toBuffer('FINE1', { errorCorrectionLevel: 'M', margin: MARGIN, scale: SCALE })),
    ).toBe(true);
    expect(failed.status).toBe('rejected');
    expect(after.status).toBe('fulfilled');
    made.mockClear();
    await expect(qr.png(tooLong)).rejects.toThrow();
    expect(made).toHaveBeenCalledTimes(1);
  });
});
