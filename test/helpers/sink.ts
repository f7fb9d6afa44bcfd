import { Writable } from 'node:stream';

/** A stream that keeps what is written (a CLI's stdout or stderr in a test). */
export function sink(): Writable & { text: () => string } {
  let buf = '';
  const w = new Writable({
    write(chunk, _enc, cb) {
      buf += String(chunk);
      cb();
    },
  });
  return Object.assign(w, { text: () => buf });
}
