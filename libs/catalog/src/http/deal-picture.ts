import { createHash } from 'node:crypto';
import { PNG } from 'pngjs';

/** The size of a deal's picture without a size in its path (`/images/deals/<id>.png`). */
export const PICTURE_DIMENSIONS = '700x420';

/**
 * A deal's picture, drawn by the service (no artwork of anyone else's): a two-colour ground with a
 * band and a disc, its colours and layout taken from a hash of the deal's id and category, so each
 * deal keeps its own and deals of a category look alike. PNG, `dimensions` as `<width>x<height>`.
 */
export function dealPicture(dealId: string, category: string, dimensions: string): Buffer {
  const [width, height] = dimensions.split('x').map(Number);
  const byCategory = createHash('sha256').update(`category\0${category}`).digest();
  const byDeal = createHash('sha256').update(`deal\0${dealId}`).digest();
  const ground = hsl(byCategory[0] * 1.41, 0.55, 0.42);
  const band = hsl(byCategory[0] * 1.41 + 30, 0.6, 0.55);
  const disc = hsl(byCategory[1] * 1.41 + 180, 0.7, 0.65);
  const slope = 0.3 + (byDeal[0] / 255) * 0.8;
  const bandAt = (0.2 + (byDeal[1] / 255) * 0.4) * height;
  const cx = (0.55 + (byDeal[2] / 255) * 0.3) * width;
  const cy = (0.3 + (byDeal[3] / 255) * 0.4) * height;
  const r = (0.18 + (byDeal[4] / 255) * 0.12) * height;
  const png = new PNG({ width, height, colorType: 2 });
  const [groundPixel, bandPixel, discPixel] = [ground, band, disc].map((rgb) => Buffer.from([...rgb, 255]));
  const halfBand = height * 0.12;
  // Row by row, as spans of one colour: the ground, the band across it, the disc over both.
  for (let y = 0; y < height; y++) {
    const row = y * width * 4;
    png.data.fill(groundPixel, row, row + width * 4);
    // |y - (bandAt + slope·(x - width/2))| < halfBand, for x
    const bandFrom = (y - bandAt - halfBand) / slope + width / 2;
    const bandTo = (y - bandAt + halfBand) / slope + width / 2;
    fillSpan(png.data, row, width, bandFrom, bandTo, bandPixel);
    const dy = y - cy;
    if (Math.abs(dy) <= r) {
      const dx = Math.sqrt(r * r - dy * dy);
      fillSpan(png.data, row, width, cx - dx, cx + dx, discPixel);
    }
  }
  return PNG.sync.write(png, { colorType: 2, filterType: 1, deflateLevel: 6 });
}

/** Pixels `from` to `to` (clipped to the row) of the row starting at byte `row`, in `pixel`. */
function fillSpan(data: Buffer, row: number, width: number, from: number, to: number, pixel: Buffer): void {
  const start = Math.max(0, Math.ceil(from));
  const end = Math.min(width, Math.floor(to) + 1);
  if (end > start) data.fill(pixel, row + start * 4, row + end * 4);
}

/** An RGB colour from hue (degrees), saturation and lightness (0 to 1). */
function hsl(hue: number, saturation: number, lightness: number): [number, number, number] {
  const h = (((hue % 360) + 360) % 360) / 60;
  const chroma = (1 - Math.abs(2 * lightness - 1)) * saturation;
  const x = chroma * (1 - Math.abs((h % 2) - 1));
  const [r, g, b] =
    h < 1
      ? [chroma, x, 0]
      : h < 2
        ? [x, chroma, 0]
        : h < 3
          ? [0, chroma, x]
          : h < 4
            ? [0, x, chroma]
            : h < 5
              ? [x, 0, chroma]
              : [chroma, 0, x];
  const m = lightness - chroma / 2;
  return [r, g, b].map((v) => Math.round((v + m) * 255)) as [number, number, number];
}
