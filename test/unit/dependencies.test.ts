import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * The layer rules of `.dependency-cruiser.cjs` over `src/`: no import circle (type-only imports
 * included), domain imports nothing of the other folders, the APIs go through the services,
 * services reach the actors only through their ports, storage and cluster code import no actors,
 * and src/sdk/ stands alone (only src/sdk/, type-only src/contract/, no npm package).
 */
describe('dependency rules of src/ (dependency-cruiser)', function () {
  this.timeout(120_000);

  it('finds no import circle and no arrow the layers forbid', () => {
    const cli = path.join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
    let output = '';
    let failed = false;
    try {
      output = execFileSync(process.execPath, [cli, 'src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], {
        cwd: ROOT,
        encoding: 'utf8',
      });
    } catch (err) {
      failed = true;
      const e = err as { stdout?: string; stderr?: string };
      output = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    }
    expect(failed, output).to.equal(false);
    expect(output).to.match(/no dependency violations found/);
  });
});
