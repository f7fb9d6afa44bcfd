import { expect } from 'chai';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { waitForTask } from '../helpers/http';
import { useServiceProcess } from '../helpers/service-process';

const root = path.resolve(__dirname, '..', '..', '..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
const scriptPath = path.join(root, 'examples', 'quickstart.sh');

/** The lines between two marker lines of `text`, without code fences, trailing blanks trimmed. */
function linesBetween(text: string, start: string, end: string): string[] {
  const lines = text.split('\n').map((l) => l.trimEnd());
  const from = lines.indexOf(start);
  const to = lines.indexOf(end);
  if (from < 0 || to <= from) throw new Error(`markers ${start} … ${end} not found in order`);
  return lines.slice(from + 1, to).filter((l) => l !== '' && !l.startsWith('```'));
}

/** The contents of every fenced `sh` block of a Markdown text, one string per block. */
function shBlocks(text: string): string[] {
  return [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1].trim());
}

/** The README's quick start is runnable: its commands are examples/quickstart.sh, run here against a real service. */
describe('README quick start', () => {
  it('the "A first task" block and examples/quickstart.sh hold the same commands', () => {
    const fromReadme = linesBetween(readme, '<!-- quickstart:start -->', '<!-- quickstart:end -->');
    const fromScript = linesBetween(fs.readFileSync(scriptPath, 'utf8'), '# quickstart:start', '# quickstart:end');
    expect(fromReadme.length).to.be.greaterThan(0);
    expect(fromScript).to.deep.equal(fromReadme);
  });

  it('the set-up commands are the ones package.json defines and .ci/run relies on', () => {
    const blocks = shBlocks(readme);
    expect(blocks).to.include('npm install && npm start');
    expect(blocks).to.include('npm test');
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    expect(pkg.scripts).to.have.property('start');
    expect(pkg.scripts).to.have.property('test');
    const ciCommands = fs
      .readFileSync(path.join(root, '.ci', 'run'), 'utf8')
      .split('\n')
      .filter((l) => !l.trimStart().startsWith('#'));
    expect(
      ciCommands.some((l) => /\bnpm test\b/.test(l)),
      '.ci/run runs npm test',
    ).to.equal(true);
  });

  describe('examples/quickstart.sh against the real service', () => {
    const fixture = useServiceProcess();

    it('submits an echo task and reads it back; the task succeeds with its payload as result', async () => {
      const stdout = await new Promise<string>((resolve, reject) => {
        execFile('bash', [scriptPath], { env: { ...process.env, SCHEDULER_URL: fixture.svc.url }, timeout: 15_000 }, (err, out, errOut) =>
          err ? reject(new Error(`quickstart.sh failed: ${err.message}\n${errOut}`)) : resolve(out),
        );
      });
      const task = JSON.parse(stdout);
      expect(task.task_id).to.match(/^[0-9a-f-]{36}$/);
      expect(task.task_type).to.equal('echo');
      expect(['PENDING', 'RUNNING', 'SUCCEEDED']).to.include(task.status);
      const done = await waitForTask(fixture.svc.url, task.task_id, (t) => t.status === 'SUCCEEDED');
      expect(done.result).to.deep.equal({ hello: 'world' });
    });
  });
});
