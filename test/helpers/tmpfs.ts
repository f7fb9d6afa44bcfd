/**
 * A tmpfs a test mounts on a fresh folder under the system's temporary directory (a small or
 * read-only volume, to fill or to refuse writes). Mounting needs root: without it `mount()` throws
 * an error naming the command, so the test fails instead of being skipped.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A tmpfs mount point; `unmount()` is safe to call whether or not it was mounted, and removes the folder. */
export interface Tmpfs {
  path: string;
  /** Mounts it. @throws Error naming the command when it cannot (not root) */
  mount(): void;
  unmount(): void;
}

/**
 * @param options `mount -o` options, e.g. `size=16m` or `ro,size=1m`
 * @param prefix the folder's name prefix
 */
export function tmpfs(options: string, prefix = 'scheduler-tmpfs-'): Tmpfs {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  let mounted = false;
  return {
    path: dir,
    mount() {
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'pipe' });
        mounted = true;
      } catch (err) {
        throw new Error(`this test mounts a tmpfs and needs root (mount -t tmpfs -o ${options} tmpfs ${dir} failed: ${String(err)})`);
      }
    },
    unmount() {
      if (mounted) execFileSync('umount', [dir]);
      mounted = false;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
