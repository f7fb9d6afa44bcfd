import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ERROR_CATALOG } from '../../src/contract/error-catalog';

/** The error catalog and docs/API.md list the same codes with the same status and retryability. */
describe('error catalog matches docs/API.md', () => {
  const doc = fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'docs', 'API.md'), 'utf8');
  const table = doc.split('<!-- error-catalog:start -->')[1]?.split('<!-- error-catalog:end -->')[0] ?? '';
  const rows = new Map<string, { status: number; retryable: boolean }>();
  for (const m of table.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \| (yes|no) \|/gm)) {
    rows.set(m[1], { status: Number(m[2]), retryable: m[3] === 'yes' });
  }

  it('every code in the catalog is documented with its status and retryability', () => {
    for (const [code, spec] of Object.entries(ERROR_CATALOG)) {
      expect(rows.get(code), `${code} missing from docs/API.md`).to.deep.equal({ status: spec.status, retryable: spec.retryable });
    }
  });

  it('the docs list no code that the catalog lacks', () => {
    for (const code of rows.keys()) expect(ERROR_CATALOG, `${code} documented but not in the catalog`).to.have.property(code);
  });
});
