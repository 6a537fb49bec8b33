import { BarcodeFormat, BinaryBitmap, DecodeHintType, HybridBinarizer, MultiFormatReader, RGBLuminanceSource } from '@zxing/library';
import jsQR from 'jsqr';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PNG } from 'pngjs';

/** What a scanner reads in a screenshot: the QR code's text and the barcode's (Code 128 or EAN-13), each null when none is found. */
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

/**
 * Like a scanner aimed at one code, it reads the whole image, then its left, middle and right
 * halves: a row of pixels that also crosses a QR code beside the barcode reads as no barcode.
 */
function barcodeIn(rgba: Buffer, width: number, height: number): string | null {
  const luminance = new Uint8ClampedArray(width * height);
  for (let i = 0; i < luminance.length; i++) luminance[i] = (rgba[i * 4] * 299 + rgba[i * 4 + 1] * 587 + rgba[i * 4 + 2] * 114) / 1000;
  const hints = new Map<DecodeHintType, unknown>([
    [DecodeHintType.POSSIBLE_FORMATS, [BarcodeFormat.CODE_128, BarcodeFormat.EAN_13]],
    [DecodeHintType.TRY_HARDER, true],
  ]);
  const half = Math.floor(width / 2);
  for (const [left, span] of [
    [0, width],
    [0, half],
    [Math.floor(width / 4), half],
    [width - half, half],
  ]) {
    const source = new RGBLuminanceSource(luminance, span, height, width, height, left, 0);
    try {
      return new MultiFormatReader().decode(new BinaryBitmap(new HybridBinarizer(source)), hints).getText();
    } catch {
      // none in this part of the image
    }
  }
  return null;
}

if (require.main === module) process.stdout.write(JSON.stringify(codesIn(readFileSync(process.argv[2]))));
