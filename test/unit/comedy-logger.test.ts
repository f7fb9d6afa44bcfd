import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

/** comedy's logger adapter writes to stderr (fd 2): read it from a child process. */
function stderrOf(level: string, lines: string[]): string[] {
  const logger = path.resolve(__dirname, '..', '..', 'src', 'actors', 'runtime', 'comedy-logger.js');
  const script = `const L = require(${JSON.stringify(logger)}); const l = new L({ level: ${JSON.stringify(level)} }); for (const x of ${JSON.stringify(lines)}) l.warn(x);`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  return r.stderr
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (JSON.parse(l) as { msg: string; level: number }).msg);
}

describe("comedy's logger adapter", () => {
  const closed =
    'InMemoryActor(6b16, dispatcher): Error while destroying child actor, actor=ForkedActorParent(6b17, worker-1) Error [ERR_IPC_CHANNEL_CLOSED]: Channel closed';

  it("a stop that killed a worker: comedy's destroy over the closed channel is debug, other warnings stay warnings", () => {
    expect(stderrOf('warn', [closed, 'something else went wrong'])).to.deep.equal(['something else went wrong']);
    expect(stderrOf('debug', [closed])).to.deep.equal([closed]);
  });
});
