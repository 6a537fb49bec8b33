import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { QR_MARGIN, QR_SCALE, qrPng } from './qr-png';

describe('qrPng', () => {
  it.each(['K7QX2M9PWD', 'A', 'https://deals.example/coupons/abc-1'])(
    'draws exactly the QR symbol of %s, scaled, with its quiet zone',
    (text) => {
      const image = PNG.sync.read(qrPng(text));
      const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
      const size = (modules.size + 2 * QR_MARGIN) * QR_SCALE;
      expect([image.width, image.height]).toEqual([size, size]);
      for (let y = 0; y < size; y++) {
        for (let x = 0; x < size; x++) {
          const [mx, my] = [Math.floor(x / QR_SCALE) - QR_MARGIN, Math.floor(y / QR_SCALE) - QR_MARGIN];
          const dark = mx >= 0 && my >= 0 && mx < modules.size && my < modules.size && modules.get(my, mx) === 1;
          const offset = (y * size + x) * 4;
          expect([x, y, image.data[offset], image.data[offset + 3]]).toEqual([x, y, dark ? 0 : 255, 255]);
        }
      }
    },
  );
});
