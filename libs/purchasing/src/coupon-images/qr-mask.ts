/**
 * The mask a QR symbol should use (ISO/IEC 18004, 7.8.3): the one whose masked symbol scores the
 * lowest penalty, the first of them on a tie, as `qrcode` chooses it. `qrcode` scores each of the
 * eight masks by re-masking its own matrix and reading it module by module; this scores them on
 * flat byte arrays from one symbol made with a known mask, and returns the symbol under the best
 * one without making it again. qr-mask.spec.ts checks it picks what `qrcode` picks, module for module.
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
  return symbol.size <= PACKED_MAX_SIZE ? bestMaskPacked(symbol, used) : bestMaskByModule(symbol, used);
}

function bestMaskByModule(symbol: QrModules, used: number): { mask: number; data: Uint8Array } {
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

/**
 * Symbols up to this size (versions 1-3; a coupon's code takes version 1) are scored with each row
 * and each column held as the bits of one number: a mask is then one XOR a line, and the penalty
 * rules become a few bit operations a line. About seven times faster than module by module, which
 * was half of an image's drawing time.
 */
const PACKED_MAX_SIZE = 31;

/** Each mask's flips for one size as bits, by row and by column (bit j of row i, bit i of column j: module (i, j)). */
const packedGrids = new Map<number, { rows: Uint32Array[]; cols: Uint32Array[] }>();
function packedGridsFor(size: number) {
  let packed = packedGrids.get(size);
  if (!packed) {
    const grids = gridsFor(size).map((grid) => packBoth(grid, size));
    packed = { rows: grids.map(({ rows }) => rows), cols: grids.map(({ cols }) => cols) };
    packedGrids.set(size, packed);
  }
  return packed;
}

/** Module (i, j) as bit j of row i and bit i of column j, both forms in one pass over the modules. */
function packBoth(modules: Uint8Array, size: number): { rows: Uint32Array; cols: Uint32Array } {
  const rows = new Uint32Array(size);
  const cols = new Uint32Array(size);
  for (let i = 0; i < size; i++) {
    let row = 0;
    for (let j = 0; j < size; j++) {
      const bit = modules[i * size + j] & 1;
      row |= bit << j;
      cols[j] |= bit << i;
    }
    rows[i] = row;
  }
  return { rows, cols };
}

/**
 * Where masks apply (not function patterns), packed, for the last reserved pattern seen of each
 * size: a size's function patterns are always the same (its version's), so this is packed once; a
 * byte-for-byte comparison (native, ~0.1 µs) guards that.
 */
const freeBySize = new Map<number, { reserved: Buffer; rows: Uint32Array; cols: Uint32Array }>();
function freeModules(reservedBit: Uint8Array, size: number): { rows: Uint32Array; cols: Uint32Array } {
  const reserved = Buffer.from(reservedBit.buffer, reservedBit.byteOffset, reservedBit.byteLength);
  const known = freeBySize.get(size);
  if (known && known.reserved.equals(reserved)) return known;
  const { rows, cols } = packBoth(reservedBit, size);
  const free = { reserved: Buffer.from(reserved), rows: rows.map((bits) => ~bits), cols: cols.map((bits) => ~bits) };
  freeBySize.set(size, free);
  return free;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** Sets module (row, col) to `bit` in both the row and the column form. */
function setPacked(rows: Uint32Array, cols: Uint32Array, row: number, col: number, bit: number): void {
  if (bit) {
    rows[row] |= 1 << col;
    cols[col] |= 1 << row;
  } else {
    rows[row] &= ~(1 << col);
    cols[col] &= ~(1 << row);
  }
}

/** {@link writeFormat} on the packed form. */
function writeFormatPacked(rows: Uint32Array, cols: Uint32Array, size: number, bits: number): void {
  for (let i = 0; i < 15; i++) {
    const bit = (bits >> i) & 1;
    setPacked(rows, cols, i < 6 ? i : i < 8 ? i + 1 : size - 15 + i, 8, bit);
    setPacked(rows, cols, 8, i < 8 ? size - i - 1 : i < 9 ? 15 - i : 15 - i - 1, bit);
  }
  setPacked(rows, cols, size - 8, 8, 1);
}

/**
 * Rules N1 and N3 on one line of `size` modules (bit k: module k), bit-parallel: runs of 5 or more
 * alike score 3 + (length - 5); each 11-module window reading 10111010000 or its reverse scores 40
 * (the two readings are each other's reverse, so the bit order does not matter).
 */
function linePenalty(line: number, size: number): number {
  // Bit k of `alike`: modules k and k + 1 are alike; a run of L alike modules is L - 1 ones. Bit k
  // of `four`: ones at k..k+3 of `alike`, so a run of L >= 5 modules gives L - 4 bits of `four`,
  // in a run of its own. Its score, L - 2, is those bits plus 2 for the run's start.
  const alike = ~(line ^ (line >>> 1)) & ((1 << (size - 1)) - 1);
  const four = alike & (alike >>> 1) & (alike >>> 2) & (alike >>> 3);
  let points = popcount(four) + 2 * popcount(four & ~(four << 1));
  // Bit k of each: the window of modules k..k+10 reads the pattern (module k + b is bit b of 0x5d0, 0x05d).
  if (size >= 11) {
    const n = ~line;
    const windows = (1 << (size - 10)) - 1;
    const finderEnd =
      n &
      (n >>> 1) &
      (n >>> 2) &
      (n >>> 3) &
      (line >>> 4) &
      (n >>> 5) &
      (line >>> 6) &
      (line >>> 7) &
      (line >>> 8) &
      (n >>> 9) &
      (line >>> 10);
    const finderStart =
      line &
      (n >>> 1) &
      (line >>> 2) &
      (line >>> 3) &
      (line >>> 4) &
      (n >>> 5) &
      (line >>> 6) &
      (n >>> 7) &
      (n >>> 8) &
      (n >>> 9) &
      (n >>> 10);
    points += 40 * (popcount(finderEnd & windows) + popcount(finderStart & windows));
  }
  return points;
}

/** {@link penalty} of a symbol's modules, scored on the packed form (for qr-mask.spec.ts). */
export function packedPenaltyOf(modules: Uint8Array, size: number): number {
  const { rows, cols } = packBoth(modules, size);
  return packedPenalty(rows, cols, size);
}

/** {@link penalty} on the packed form. */
function packedPenalty(rows: Uint32Array, cols: Uint32Array, size: number): number {
  let points = 0;
  for (let a = 0; a < size; a++) points += linePenalty(rows[a], size) + linePenalty(cols[a], size);
  const pairs = (1 << (size - 1)) - 1;
  let blocks = 0;
  let darkCount = 0;
  for (let i = 0; i < size; i++) {
    darkCount += popcount(rows[i]);
    if (i === size - 1) break;
    const a = rows[i];
    const b = rows[i + 1];
    blocks += popcount(a & b & (a >>> 1) & (b >>> 1) & pairs) + popcount(~(a | b | (a >>> 1) | (b >>> 1)) & pairs);
  }
  points += blocks * 3;
  points += Math.abs(Math.ceil((darkCount * 100) / (size * size) / 5) - 10) * 10;
  return points;
}

function bestMaskPacked(symbol: QrModules, used: number): { mask: number; data: Uint8Array } {
  const { size, data, reservedBit } = symbol;
  const grids = packedGridsFor(size);
  // Where masks apply (not function patterns), and the modules with the mask they were made with undone.
  const { rows: freeRows, cols: freeCols } = freeModules(reservedBit, size);
  const { rows: dataRows, cols: dataCols } = packBoth(data, size);
  const unmaskedRows = dataRows.map((bits, i) => bits ^ (grids.rows[used][i] & freeRows[i]));
  const unmaskedCols = dataCols.map((bits, j) => bits ^ (grids.cols[used][j] & freeCols[j]));
  const rows = new Uint32Array(size);
  const cols = new Uint32Array(size);
  let best = 0;
  let lowest = Infinity;
  for (let mask = 0; mask < MASKS.length; mask++) {
    for (let i = 0; i < size; i++) {
      rows[i] = unmaskedRows[i] ^ (grids.rows[mask][i] & freeRows[i]);
      cols[i] = unmaskedCols[i] ^ (grids.cols[mask][i] & freeCols[i]);
    }
    writeFormatPacked(rows, cols, size, formatBits(LEVEL_M_BITS, mask));
    const score = packedPenalty(rows, cols, size);
    if (score < lowest) {
      lowest = score;
      best = mask;
    }
  }
  const out = new Uint8Array(size * size);
  for (let i = 0; i < size; i++) rows[i] = unmaskedRows[i] ^ (grids.rows[best][i] & freeRows[i]);
  writeFormatPacked(rows, cols, size, formatBits(LEVEL_M_BITS, best));
  for (let i = 0; i < size; i++) for (let j = 0; j < size; j++) out[i * size + j] = (rows[i] >>> j) & 1;
  return { mask: best, data: out };
}
