import { readFileSync } from 'node:fs';

/** The process's open-file limit (its soft limit), or null where it cannot be read (not Linux). */
export function openFileLimit(limitsFile = '/proc/self/limits'): number | null {
  try {
    const line = readFileSync(limitsFile, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    return soft === undefined || soft === 'unlimited' ? null : Number(soft) || null;
  } catch {
    return null;
  }
}

/**
 * The cap on connections at once: `wanted`, or less when the open-file limit would not leave the
 * process files of its own (its event log, views, logs, outgoing connections) with that many
 * connections open. It keeps a quarter of the limit, up to 1,024 files, for them.
 */
export function connectionCap(wanted: number, limit: number | null = openFileLimit()): { cap: number; limit: number | null } {
  if (limit === null) return { cap: wanted, limit };
  const reserve = Math.min(1024, Math.ceil(limit / 4));
  return { cap: Math.max(1, Math.min(wanted, limit - reserve)), limit };
}
