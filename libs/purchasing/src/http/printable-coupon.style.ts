import { createHash } from 'node:crypto';

/**
 * The printable coupon's only style sheet, sent in the page and allowed by its hash. On paper it
 * fits one A4 or Letter page (no page size is set: the narrower A4 and the shorter Letter both fit)
 * unless the deal's terms are very long. Browsers print no backgrounds by default, so a coupon that
 * is not valid is marked with borders and coloured text, not a fill.
 */
export const PRINTABLE_PAGE_STYLE = `
@page{margin:12mm}
*{box-sizing:border-box}
html{background:#fff;color:#111}
body{margin:0;font:16px/1.4 "Helvetica Neue",Arial,"Liberation Sans","DejaVu Sans",sans-serif;overflow-wrap:anywhere}
main{position:relative;overflow:hidden;max-width:46rem;margin:1.5rem auto;padding:1.5rem;border:2px dashed #666}
h1{font-size:1.6rem;line-height:1.2;margin:0}
h2{font-size:.8rem;letter-spacing:.06em;text-transform:uppercase;color:#444;margin:1rem 0 .25rem}
p{margin:.2rem 0}
.merchant{font-size:1.2rem;margin-top:.25rem}
.when{font-weight:700;margin-top:.75rem}
.codes{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-around;gap:1rem 2rem;margin:1.25rem 0;padding:1rem 0;border-top:1px solid #bbb;border-bottom:1px solid #bbb;break-inside:avoid}
figure{margin:0;text-align:center}
figcaption{font-size:.85rem;margin-top:.25rem}
.qr{width:180px;height:180px;image-rendering:pixelated}
.barcode{width:286px;height:auto}
.code{display:block;font:700 1.35rem/1.2 "DejaVu Sans Mono","Liberation Mono",monospace;letter-spacing:.1em}
.locations{list-style:none;margin:0;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(13rem,1fr));gap:.5rem 1.5rem}
address{font-style:normal}
.text{white-space:pre-line}
.fine{font-size:.8rem}
.ref,.hint{font-size:.8rem;color:#555;margin-top:1rem}
.void{margin:0 0 1rem;padding:.5rem;border:5px solid #b00;color:#b00;font-size:2.2rem;font-weight:800;text-align:center;text-transform:uppercase}
.void small{display:block;font-size:1rem;font-weight:600;text-transform:none}
.watermark{position:absolute;inset:0;display:flex;align-items:center;justify-content:center;font-size:min(6rem,12vw);font-weight:900;letter-spacing:.08em;text-transform:uppercase;color:rgba(187,0,0,.16);transform:rotate(-28deg);pointer-events:none}
@media print{
body{font-size:10pt}
main{max-width:none;margin:0;padding:5mm 7mm}
h2{font-size:7.5pt;margin:3mm 0 1mm}
.when{margin-top:2mm}
.codes{margin:3mm 0;padding:3mm 0}
.qr{width:38mm;height:38mm}
.barcode{width:72mm;height:auto}
.locations{grid-template-columns:repeat(auto-fill,minmax(42mm,1fr));gap:2mm 5mm;font-size:8.5pt}
.fine{font-size:7pt}
.watermark{font-size:4.5rem}
.hint{display:none}
}
`;

const styleHash = createHash('sha256').update(PRINTABLE_PAGE_STYLE).digest('base64');

/**
 * What the page may load and do: its one style sheet (by hash) and its images (data addresses);
 * no script, nothing from elsewhere, no forms, no framing by another site.
 */
export const PRINTABLE_PAGE_POLICY = `default-src 'none'; img-src data:; style-src 'sha256-${styleHash}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
