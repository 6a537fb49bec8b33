import { yieldToLoop } from '@deals/kernel';

/** How deep a JSON body may nest (objects and arrays): a user's `partner_data` may nest 32 levels inside the body's own. */
export const MAX_JSON_DEPTH = 64;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Where a scan of a JSON text stands: its depth, and whether it is inside a string (and after its backslash). */
interface Scan {
  depth: number;
  inString: boolean;
  escaped: boolean;
}

/** Scans `text` from `from` to `to` on from `scan`; true as soon as the depth passes `limit`. */
function deeperIn(text: string, from: number, to: number, scan: Scan, limit: number): boolean {
  let { depth, inString, escaped } = scan;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (escaped) escaped = false;
    else if (inString) {
      if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  Object.assign(scan, { depth, inString, escaped });
  return false;
}

/**
 * Whether a JSON text nests objects and arrays deeper than `limit`, read in one pass before it is
 * parsed (brackets inside strings do not count), so that nothing that walks a parsed body (the
 * request's hash, validation, the log) meets a deeper one. A text no longer than the limit cannot
 * exceed it.
 */
export function nestsDeeperThan(text: string, limit = MAX_JSON_DEPTH): boolean {
  if (text.length <= limit) return false;
  return deeperIn(text, 0, text.length, { depth: 0, inString: false, escaped: false }, limit);
}

/** Characters of a text read in one turn of the event loop. */
export const DEPTH_SLICE = 1024 * 1024;

/** {@link nestsDeeperThan}, read {@link DEPTH_SLICE} characters at a time with a turn of the loop between them (a large body). */
export async function nestsDeeperThanInSlices(text: string, limit = MAX_JSON_DEPTH): Promise<boolean> {
  const scan: Scan = { depth: 0, inString: false, escaped: false };
  for (let from = 0; from < text.length; from += DEPTH_SLICE) {
    if (from > 0) await yieldToLoop();
    if (deeperIn(text, from, Math.min(from + DEPTH_SLICE, text.length), scan, limit)) return true;
  }
  return false;
}
