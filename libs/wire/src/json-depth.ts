/** How deep a JSON body may nest (objects and arrays): a user's `partner_data` may nest 32 levels inside the body's own. */
export const MAX_JSON_DEPTH = 64;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether a JSON text nests objects and arrays deeper than `limit`, read in one pass before it is
 * parsed (brackets inside strings do not count), so that nothing that walks a parsed body (the
 * request's hash, validation, the log) meets a deeper one. A text no longer than the limit cannot
 * exceed it.
 */
export function nestsDeeperThan(text: string, limit = MAX_JSON_DEPTH): boolean {
  if (text.length <= limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}
