import fs from 'node:fs';
import path from 'node:path';

/** WAL frames (4 KiB pages) after which the writer checkpoints itself on a large volume: 64 MiB. */
export const WAL_MAX_PAGES = 16_384;

/** The fewest frames the bound goes down to (1 MiB): below it every few commits would checkpoint. */
export const WAL_MIN_PAGES = 256;

/** Bytes of a WAL frame's page (SQLite's default `page_size`). */
const PAGE_BYTES = 4096;

/**
 * How many WAL frames the writer lets accumulate before it checkpoints itself, for a store on a
 * volume of `volumeBytes`: a sixteenth of the volume, between {@link WAL_MIN_PAGES} (1 MiB) and
 * {@link WAL_MAX_PAGES} (64 MiB, reached from 1 GiB up). A WAL that may grow to 64 MiB filled an
 * 8 MiB volume by itself, and then could not be copied back (a checkpoint grows the store file
 * first) nor cut, even after a restart: the store stayed `disk_full` with nothing to delete. Kept
 * to a sixteenth, the WAL leaves the store file room to take its pages back.
 * @param volumeBytes the volume's size in bytes; null (unknown) gives the 64 MiB bound
 */
export function walBoundPages(volumeBytes: number | null): number {
  if (volumeBytes === null || !Number.isFinite(volumeBytes) || volumeBytes <= 0) return WAL_MAX_PAGES;
  return Math.max(WAL_MIN_PAGES, Math.min(WAL_MAX_PAGES, Math.floor(volumeBytes / 16 / PAGE_BYTES)));
}

/** The size in bytes of the volume holding `file` (`statfs`: blocks × block size); null when it cannot be read. */
export function volumeBytesOf(file: string): number | null {
  try {
    const s = fs.statfsSync(path.dirname(path.resolve(file)));
    return s.blocks * s.bsize;
  } catch {
    return null;
  }
}

/** {@link walBoundPages} in bytes: what `journal_size_limit` cuts the WAL file back to. */
export function walBoundBytes(pages: number): number {
  return pages * PAGE_BYTES;
}
