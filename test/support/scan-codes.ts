import { BinaryBitmap, BitArray, Code128Reader, HybridBinarizer, RGBLuminanceSource } from '@zxing/library';
import jsQR from 'jsqr';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PNG } from 'pngjs';

/** What a scanner reads in a screenshot: the QR code's text and the barcode's (Code 128, as the coupon draws it), each null when none is found. */
export interface ScannedCodes {
  qr: string | null;
  barcode: string | null;
}

/**
 * The codes in a PNG screenshot (a file), read in a process of its own: inside jest's module
 * sandbox pngjs and jsQR run many times slower.
 */
export async function scanCodes(file: string): Promise<ScannedCodes> {
  const { stdout } = await promisify(execFile)(process.execPath, ['-r', '@swc-node/register', __filename, file], {
    cwd: join(__dirname, '..', '..'),
    timeout: 60_000,
  });
  return JSON.parse(stdout) as ScannedCodes;
}

/** The codes in a PNG image's pixels. */
export function codesIn(png: Buffer): ScannedCodes {
  const { width, height, data } = PNG.sync.read(png);
  return { qr: jsQR(new Uint8ClampedArray(data), width, height)?.data ?? null, barcode: barcodeIn(data, width, height) };
}

/** Rows that must read the same text before it counts as the barcode's (the printed barcode gives well over a hundred). */
const AGREEING_ROWS = 8;

/**
 * Like a till's scanner, which beeps only when several sweeps agree: every pixel row of the image,
 * and of its left, middle and right halves (a row that also crosses the QR code beside the barcode
 * reads nothing), is read as Code 128, both ways. A single row can read a garbage text whose check
 * character happens to hold; the text most rows read counts, when at least AGREEING_ROWS read it.
 */
function barcodeIn(rgba: Buffer, width: number, height: number): string | null {
  const luminance = new Uint8ClampedArray(width * height);
  for (let i = 0; i < luminance.length; i++) luminance[i] = (rgba[i * 4] * 299 + rgba[i * 4 + 1] * 587 + rgba[i * 4 + 2] * 114) / 1000;
  const reader = new Code128Reader();
  const readings = new Map<string, number>();
  const half = Math.floor(width / 2);
  for (const [left, span] of [
    [0, width],
    [0, half],
    [Math.floor(width / 4), half],
    [width - half, half],
  ]) {
    const image = new BinaryBitmap(new HybridBinarizer(new RGBLuminanceSource(luminance, span, height, width, height, left, 0)));
    for (let y = 0; y < height; y++) {
      try {
        const row = image.getBlackRow(y, new BitArray(span));
        const reversed = row.clone();
        reversed.reverse();
        const text = readRow(reader, y, row) ?? readRow(reader, y, reversed);
        if (text !== null) readings.set(text, (readings.get(text) ?? 0) + 1);
      } catch {
        // a row of one shade: nothing to read
      }
    }
  }
  const [best] = [...readings].sort(([, a], [, b]) => b - a);
  return best && best[1] >= AGREEING_ROWS ? best[0] : null;
}

/** The Code 128 text along one row of pixels, or null. */
function readRow(reader: Code128Reader, y: number, row: BitArray): string | null {
  try {
    return reader.decodeRow(y, row, new Map()).getText();
  } catch {
    return null;
  }
}

if (require.main === module) process.stdout.write(JSON.stringify(codesIn(readFileSync(process.argv[2]))));
