import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..', '..');
const mapText = fs.readFileSync(path.join(root, 'docs', 'ARCHITECTURE.md'), 'utf8');

/**
 * Every `src/…` path named in a text: a run of path characters starting at `src/` (not inside a
 * longer path such as `dist/src/…`), cut at a glob or brace, without trailing punctuation.
 * A path ending in `/` names a folder.
 */
function srcPaths(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/(?<![\w./-])src\/[\w./*{}-]*/g)) {
    const p = m[0].replace(/[*{].*$/, '').replace(/[.]+$/, '');
    found.add(p);
  }
  return [...found].sort();
}

/** Every folder under `src/`, relative to the repository (`src/domain/cron`, …). */
function srcFolders(dir = 'src'): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const sub = `${dir}/${e.name}`;
    out.push(sub, ...srcFolders(sub));
  }
  return out.sort();
}

/** docs/ARCHITECTURE.md is a map of src/: what it names exists, and every folder is on it. */
describe('docs/ARCHITECTURE.md matches src/', () => {
  const named = srcPaths(mapText);

  it('names paths under src/', () => {
    expect(named.length).to.be.greaterThan(20);
  });

  it('every src/ path it names exists', () => {
    const missing = named.filter((p) => !fs.existsSync(path.join(root, p)));
    expect(missing, `named in docs/ARCHITECTURE.md but not in the tree`).to.deep.equal([]);
  });

  it('every folder of src/ is named (as src/<folder>/)', () => {
    const namedFolders = new Set(named.map((p) => p.replace(/\/$/, '')));
    const unnamed = srcFolders().filter((f) => !namedFolders.has(f));
    expect(unnamed, `folders of src/ missing from docs/ARCHITECTURE.md`).to.deep.equal([]);
  });

  it('every file a folder row of the table names (`name.ts`) is in that folder', () => {
    const missing: string[] = [];
    for (const row of mapText.matchAll(/^\| `(src\/(?:[\w./-]*\/)?)` \|(.*)\|\s*$/gm)) {
      for (const f of row[2].matchAll(/`([\w.-]+\.(?:ts|lua|json))`/g)) {
        const file = `${row[1]}${f[1]}`;
        if (!fs.existsSync(path.join(root, file))) missing.push(file);
      }
    }
    expect(missing, `files named in a folder row of docs/ARCHITECTURE.md but not in that folder`).to.deep.equal([]);
  });
});
