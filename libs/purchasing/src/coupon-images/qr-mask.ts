/**
 * The mask a QR symbol should use (ISO/IEC 18004, 7.8.3): the one whose masked symbol scores the
 * lowest penalty, the first of them on a tie, as `qrcode` chooses it. `qrcode` scores each of the
 * eight masks by re-masking its own matrix and reading it module by module; this scores them on
 * flat byte arrays from one symbol made with a known mask, and returns the symbol under the best
 * one without making it again. The spec checks it picks what `qrcode` picks, module for module.
 */

/** The modules of a symbol as `qrcode` gives them: row-major, 1 = dark; `reservedBit` marks function patterns. */
export interface QrModules {
  size: number;
  data: Uint8Array;
  reservedBit: Uint8Array;
}

/** Error correction level M's two format bits (L 01, M 00, Q 11, H 10). */
const LEVEL_M_BITS = 0b00;

const MASKS: Array<(row: number, col: number) => boolean> = [
  (i, j) => (i + j) % 2 === 0,
  (i) => i % 2 === 0,
  (_i, j) => j % 3 === 0,
  (i, j) => (i + j) % 3 === 0,
  (i, j) => (Math.floor(i / 2) + Math.floor(j / 3)) % 2 === 0,
  (i, j) => ((i * j) % 2) + ((i * j) % 3) === 0,
  (i, j) => (((i * j) % 2) + ((i * j) % 3)) % 2 === 0,
  (i, j) => (((i * j) % 3) + ((i + j) % 2)) % 2 === 0,
];

/** Each mask's modules for one symbol size (1 where the mask flips a module), made once per size. */
const maskGrids = new Map<number, Uint8Array[]>();
function gridsFor(size: number): Uint8Array[] {
  let grids = maskGrids.get(size);
  if (!grids) {
    grids = MASKS.map((flips) => {
      const grid = new Uint8Array(size * size);
      for (let i = 0; i < size; i++) for (let j = 0; j < size; j++) grid[i * size + j] = flips(i, j) ? 1 : 0;
      return grid;
    });
    maskGrids.set(size, grids);
  }
  return grids;
}

/** The 15 format bits for a level's bits and a mask: BCH(15,5) code, then XOR 101010000010010. */
function formatBits(levelBits: number, mask: number): number {
  const data = (levelBits << 3) | mask;
  let remainder = data << 10;
  for (let bit = 14; bit >= 10; bit--) if (remainder & (1 << bit)) remainder ^= 0b10100110111 << (bit - 10);
  return ((data << 10) | remainder) ^ 0b101010000010010;
}

/** Writes the format bits where the standard (and `qrcode`) puts both copies, and the dark module. */
function writeFormat(modules: Uint8Array, size: number, bits: number): void {
  for (let i = 0; i < 15; i++) {
    const bit = (bits >> i) & 1;
    const row = i < 6 ? i : i < 8 ? i + 1 : size - 15 + i;
    modules[row * size + 8] = bit;
    const col = i < 8 ? size - i - 1 : i < 9 ? 15 - i : 15 - i - 1;
    modules[8 * size + col] = bit;
  }
  modules[(size - 8) * size + 8] = 1;
}

/** The penalty of a masked symbol: runs of 5+ (N1), 2×2 blocks (N2), finder-like patterns (N3), dark balance (N4). */
export function penalty(m: Uint8Array, size: number): number {
  let points = 0;
  for (let a = 0; a < size; a++) {
    let runRow = 0;
    let runCol = 0;
    let lastRow = -1;
    let lastCol = -1;
    let bitsRow = 0;
    let bitsCol = 0;
    for (let b = 0; b < size; b++) {
      const alongRow = m[a * size + b];
      const alongCol = m[b * size + a];
      if (alongRow === lastRow) runRow++;
      else {
        if (runRow >= 5) points += 3 + runRow - 5;
        lastRow = alongRow;
        runRow = 1;
      }
      if (alongCol === lastCol) runCol++;
      else {
        if (runCol >= 5) points += 3 + runCol - 5;
        lastCol = alongCol;
        runCol = 1;
      }
      bitsRow = ((bitsRow << 1) & 0x7ff) | alongRow;
      bitsCol = ((bitsCol << 1) & 0x7ff) | alongCol;
      if (b >= 10) {
        if (bitsRow === 0x5d0 || bitsRow === 0x05d) points += 40;
        if (bitsCol === 0x5d0 || bitsCol === 0x05d) points += 40;
      }
    }
    if (runRow >= 5) points += 3 + runRow - 5;
    if (runCol >= 5) points += 3 + runCol - 5;
  }
  let blocks = 0;
  for (let row = 0; row < size - 1; row++) {
    for (let col = 0; col < size - 1; col++) {
      const i = row * size + col;
      const dark = m[i] + m[i + 1] + m[i + size] + m[i + size + 1];
      if (dark === 4 || dark === 0) blocks++;
    }
  }
  points += blocks * 3;
  let darkCount = 0;
  for (let i = 0; i < m.length; i++) darkCount += m[i];
  points += Math.abs(Math.ceil((darkCount * 100) / m.length / 5) - 10) * 10;
  return points;
}

/**
 * The best mask for a level-M symbol made with mask `used` (its modules masked with it), and the
 * symbol's modules under that mask (format bits included).
 */
export function bestMaskLevelM(symbol: QrModules, used: number): { mask: number; data: Uint8Array } {
  const { size, data, reservedBit } = symbol;
  const grids = gridsFor(size);
  const unmasked = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) unmasked[i] = reservedBit[i] ? data[i] : data[i] ^ grids[used][i];
  let masked = new Uint8Array(data.length);
  let best = { mask: 0, data: masked };
  let lowest = Infinity;
  for (let mask = 0; mask < MASKS.length; mask++) {
    const grid = grids[mask];
    for (let i = 0; i < data.length; i++) masked[i] = reservedBit[i] ? unmasked[i] : unmasked[i] ^ grid[i];
    writeFormat(masked, size, formatBits(LEVEL_M_BITS, mask));
    const score = penalty(masked, size);
    if (score < lowest) {
      lowest = score;
      best = { mask, data: masked };
      masked = new Uint8Array(data.length);
    }
  }
  return best;
}
