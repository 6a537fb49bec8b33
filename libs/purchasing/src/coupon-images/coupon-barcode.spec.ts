import { barcodeSvg } from './coupon-barcode';

describe('barcodeSvg', () => {
  it("draws a coupon's 13 digits as a Code 128 SVG, the same each time", () => {
    const svg = barcodeSvg('4006381333931');
    expect(svg).toMatch(/^<svg viewBox="0 0 \d+ \d+" xmlns="http:\/\/www\.w3\.org\/2000\/svg">/);
    expect(svg).not.toMatch(/<script|<text|href/);
    expect(barcodeSvg('4006381333931')).toBe(svg);
    expect(barcodeSvg('4006381333932')).not.toBe(svg);
  });

  it('answers null for a value Code 128 cannot carry', () => {
    expect(barcodeSvg('')).toBeNull();
  });
});
