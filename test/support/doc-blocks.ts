import { readFileSync } from 'node:fs';

/**
 * The fenced blocks of one language in one section of a Markdown file (from its `## heading` to the
 * next heading of the same or a higher level), in order, as written.
 */
export function fencedBlocks(file: string, heading: string, language: string): string[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const start = lines.findIndex((line) => line.trim() === heading);
  if (start === -1) throw new Error(`${file} has no heading "${heading}"`);
  const level = /^#+/.exec(heading)![0].length;
  const blocks: string[] = [];
  let open: string[] | null = null;
  for (const line of lines.slice(start + 1)) {
    if (open === null) {
      const next = /^(#+) /.exec(line);
      if (next && next[1].length <= level) break;
      if (line.trim() === '```' + language) open = [];
    } else if (line.trim() === '```') {
      blocks.push(open.join('\n'));
      open = null;
    } else open.push(line);
  }
  return blocks;
}
