import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { nodeSupportWarning } from '../../src/node-support';

describe('nodeSupportWarning: the Node.js versions of package.json "engines"', () => {
  it('none for 20.x, 22.x and 24.x (24.19 and later too: better-sqlite3 13 there)', () => {
    for (const v of ['20.0.0', '20.20.2', '22.23.3', '24.0.0', '24.18.1', '24.21.0']) expect(nodeSupportWarning(v), v).to.equal(null);
  });

  it('one line for other release lines', () => {
    for (const v of ['18.20.0', '21.7.3', '23.1.0', '25.0.0', '26.10.0'])
      expect(nodeSupportWarning(v), v).to.include(v).and.include('outside the supported range');
  });

  it('agrees with package.json "engines"', () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
      engines: { node: string };
    };
    expect(pkg.engines.node).to.equal('20.x || 22.x || 24.x');
  });
});
