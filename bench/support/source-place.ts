import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is compiled to dist/bench/support/). */
export const ROOT = resolve(__dirname, '..', '..', '..');

const sourceMaps = new Map<string, SourceMap | null>();

/**
 * Where a profile frame's code lives, in the project's own sources when the compiled file has a
 * source map: `{file, line}` (file relative to the repository, line 1-based).
 */
export function originalPlace(url: string, line: number, column: number): { file: string; line: number } {
  if (!url) return { file: '(native)', line: 0 };
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  if (!sourceMaps.has(path)) {
    let map: SourceMap | null = null;
    try {
      if (path.includes(`${join(ROOT, 'dist')}/`)) map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
    } catch {
      map = null;
    }
    sourceMaps.set(path, map);
  }
  const entry = sourceMaps.get(path)?.findEntry(line, column) as { originalSource?: string; originalLine?: number } | undefined;
  if (entry?.originalSource) {
    const source = entry.originalSource.startsWith('file://')
      ? fileURLToPath(entry.originalSource)
      : resolve(path, '..', entry.originalSource);
    return { file: relative(ROOT, source), line: (entry.originalLine ?? 0) + 1 };
  }
  return { file: path.startsWith(ROOT) ? relative(ROOT, path) : path, line: line + 1 };
}

/** `node_modules/<package>` for dependencies, the file itself for the project's own code. */
export function owner(file: string): string {
  const i = file.lastIndexOf('node_modules/');
  if (i < 0) return file;
  const rest = file.slice(i + 'node_modules/'.length).split('/');
  return `node_modules/${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
}
