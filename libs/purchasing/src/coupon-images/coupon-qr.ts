import { RecentMap } from '@deals/kernel';
import { Injectable } from '@nestjs/common';
import QRCode from 'qrcode';

/** Images kept made: about this many codes most recently asked for. */
const KEPT_IMAGES = 10_000;

/** Error correction M; 6 pixels a module and a quiet zone of 2 modules, as the printable page sizes it. */
const QR_OPTIONS = { type: 'png', errorCorrectionLevel: 'M', margin: 2, scale: 6 } as const;

/**
 * QR images of coupons' redemption codes: `qrcode`'s PNG, made when an answer or a link first
 * asks for a code's image, not when the coupon is bought. A coupon's code never changes, so each
 * image is kept (the codes most recently asked for) and one asked for again while it is being made
 * waits for that making. An image that fails is not kept: the next ask tries again.
 */
@Injectable()
export class CouponQr {
  private readonly images = new RecentMap<string, Buffer>(KEPT_IMAGES);
  private readonly making = new Map<string, Promise<Buffer>>();

  png(code: string): Promise<Buffer> {
    const image = this.images.get(code);
    if (image) return Promise.resolve(image);
    let made = this.making.get(code);
    if (!made) {
      // Options made afresh each time: `qrcode` writes into the options it is given.
      made = QRCode.toBuffer(code, { ...QR_OPTIONS })
        .then((png) => {
          this.images.set(code, png);
          return png;
        })
        .finally(() => this.making.delete(code));
      this.making.set(code, made);
    }
    return made;
  }

  async base64(code: string): Promise<string> {
    return (await this.png(code)).toString('base64');
  }
}
