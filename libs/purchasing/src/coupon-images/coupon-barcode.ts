import bwipjs from 'bwip-js';

/**
 * A coupon's barcode as an SVG image (vector, so it prints sharp at any size): Code 128, its
 * digits written beneath for a cashier to key in. The 13 digits end in an EAN-style check digit,
 * but they are no GS1 trade item number: drawn as EAN-13, a till would look them up as a product.
 * Code 128 carries them as they are, and every retail scanner reads it. White background and a
 * quiet zone of ten modules each side. Null for a value Code 128 cannot carry.
 */
export function barcodeSvg(value: string): string | null {
  try {
    return bwipjs.toSVG({
      bcid: 'code128',
      text: value,
      scale: 1,
      height: 14,
      includetext: true,
      textxalign: 'center',
      textyoffset: -3,
      paddingwidth: 10,
      paddingheight: 2,
      backgroundcolor: 'FFFFFF',
    });
  } catch {
    return null;
  }
}
