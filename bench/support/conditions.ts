/** The conditions printed in the header of a bench run: Node, CPUs, where the temp files go. */
import { statfsSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';

const FILESYSTEMS: Record<number, string> = {
  0xef53: 'ext4',
  0x01021994: 'tmpfs',
  0x58465342: 'xfs',
  0x9123683e: 'btrfs',
  0x794c7630: 'overlayfs',
  0x2fc12fc1: 'zfs',
};

/** The machine the figures were taken on, for the header of the table. */
export function machine(): string[] {
  const cpu = cpus();
  let fs = 'unknown';
  try {
    const type = statfsSync(tmpdir()).type;
    fs = FILESYSTEMS[type] ?? `0x${type.toString(16)}`;
  } catch {
    // statfs is missing on some platforms: leave it unknown
  }
  return [
    `node ${process.version} on ${process.platform}/${process.arch}, ${cpu.length} CPUs (${cpu[0]?.model.trim() ?? 'unknown model'})`,
    `temp files in ${tmpdir()} (${fs})`,
  ];
}
