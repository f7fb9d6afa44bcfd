import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { SERVICE_NODE_FLAGS } from '../../load-tests/bench/paths';

describe('the Node flags of the service', () => {
  it('npm start and the benchmarks start the service with the same flags', () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
      scripts: { start: string };
    };
    // `exec`: npm hands a SIGTERM to the shell it runs the script in; without exec the shell died
    // and the service went on running (found by a fresh-clone trial).
    expect(pkg.scripts.start).to.equal(`exec node ${SERVICE_NODE_FLAGS.join(' ')} dist/src/main.js`);
  });
});
