import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { readJsonFile } from '../../src/cli/context';
import { runCli } from '../../src/cli/program';
import { sink } from '../helpers/sink';
import { tempDir } from '../helpers/temp-dir';

describe('CLI input: JSON-lines files and flags that contradict each other', () => {
  const dir = tempDir();
  after(() => dir.remove());
  const file = (name: string, text: string) => {
    const f = path.join(dir.path, name);
    fs.writeFileSync(f, text);
    return f;
  };

  it('a bad line of a JSON-lines file is named by its number, not by a position on another line', () => {
    const f = file('bad.jsonl', '{"task_type":"noop"}\n{"task_type":"noop"}\n\n{"task_type":"noop",}\n');
    expect(() => readJsonFile(f, true)).to.throw(`${f} line 4 is not valid JSON: `);
    const good = file('good.jsonl', '{"task_type":"noop"}\n\n{"task_type":"echo"}\n');
    expect(readJsonFile(good, true)).to.deep.equal([{ task_type: 'noop' }, { task_type: 'echo' }]);
  });

  it('a pretty-printed document with an error keeps the whole-file message; a byte order mark is dropped', () => {
    const f = file('doc.json', '{\n  "task_type": "noop",\n}\n');
    expect(() => readJsonFile(f, true)).to.throw(new RegExp(`^${f} is not valid JSON: `));
    const bom = file('bom.json', '\uFEFF{"task_type":"noop"}\n');
    expect(readJsonFile(bom, true)).to.deep.equal({ task_type: 'noop' });
    expect(readJsonFile(file('bom-lines.jsonl', '\uFEFF{"a":1}\n{"a":2}\n'), true)).to.deep.equal([{ a: 1 }, { a: 2 }]);
  });

  it('tenant set: --burst without --rate, and --no-rate-limit with either, are refused (exit 2) before any request', async () => {
    for (const args of [
      ['tenant', 'set', 'bob', '--weight', '2', '--burst', '5'],
      ['tenant', 'set', 'bob', '--rate', '5', '--no-rate-limit'],
      ['tenant', 'set', 'bob', '--burst', '5', '--no-rate-limit'],
    ]) {
      const out = sink();
      const err = sink();
      // An address nothing listens on: a request would exit 3 (unreachable), not 2.
      const code = await runCli([...args, '--url', 'http://127.0.0.1:9'], { env: {}, out, err });
      expect(code, args.join(' ')).to.equal(2);
      expect(err.text(), args.join(' ')).to.match(/^error: --(burst|no-rate-limit) /);
    }
  });
});
