/**
 * A field as CSV writes it, safe in a spreadsheet whatever separator it splits on (`,` or `;`): a
 * plain number (or nothing) bare; any other text quoted whole (quotes doubled), so no separator or line break
 * in it starts a cell of its own; and a formula's first character (`=`, `+`, `-`, `@`; a tab or a
 * carriage return at the start) behind a single quote, at the text's start and after any separator
 * or line break inside it (a partner's reference may hold anything).
 */
export const csvField = (value: string | number | null): string => {
  const raw = value === null ? '' : String(value);
  if (/^\d*$/.test(raw)) return raw;
  const inner = raw.replace(/([\r\n\t,;|])(?=[=+\-@])/g, "$1'");
  const text = /^[=+\-@\t\r]/.test(inner) ? `'${inner}` : inner;
  return `"${text.replace(/"/g, '""')}"`;
};
