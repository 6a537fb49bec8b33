import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectionCap, openFileLimit } from './connection-cap';

describe('the cap on connections', () => {
  it('is the wanted one while the open-file limit leaves the process files of its own, and lower otherwise', () => {
    expect(connectionCap(10_000, 1_048_576)).toEqual({ cap: 10_000, limit: 1_048_576 });
    expect(connectionCap(10_000, 10_500)).toEqual({ cap: 9_476, limit: 10_500 });
    expect(connectionCap(10_000, 1_024)).toEqual({ cap: 768, limit: 1_024 });
    expect(connectionCap(10_000, null)).toEqual({ cap: 10_000, limit: null });
  });

  it("reads the soft open-file limit from the process's limits, or none", () => {
    const dir = mkdtempSync(join(tmpdir(), 'limits-'));
    try {
      const file = join(dir, 'limits');
      writeFileSync(
        file,
        'Limit                     Soft Limit           Hard Limit           Units\nMax open files            4096                 524288               files\n',
      );
      expect(openFileLimit(file)).toBe(4096);
      writeFileSync(file, 'Max open files            unlimited            unlimited            files\n');
      expect(openFileLimit(file)).toBeNull();
      expect(openFileLimit(join(dir, 'absent'))).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
