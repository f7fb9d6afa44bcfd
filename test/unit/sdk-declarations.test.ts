import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { tempDir } from '../helpers/temp-dir';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const ENTRY = path.join(ROOT, 'dist', 'src', 'sdk', 'client', 'index.d.ts');

/** Every `.d.ts` the client's declarations reach, and the packages they import. */
function declarationClosure(entry: string): { files: string[]; packages: Set<string> } {
  const files: string[] = [];
  const packages = new Set<string>();
  const todo = [entry];
  while (todo.length) {
    const file = todo.pop() as string;
    if (files.includes(file)) continue;
    files.push(file);
    const text = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
    for (const [, spec] of text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
      if (!spec.startsWith('.')) packages.add(spec);
      else todo.push(path.resolve(path.dirname(file), `${spec}.d.ts`));
    }
  }
  return { files, packages };
}

/** `node_modules/actor-task-scheduler` in `dir` → this repository (a consumer imports the package by name). */
function linkPackage(dir: string): void {
  const link = path.join(dir, 'node_modules', 'actor-task-scheduler');
  if (fs.existsSync(link)) return;
  fs.mkdirSync(path.dirname(link), { recursive: true });
  fs.symlinkSync(ROOT, link, 'dir');
}

/** The type errors of `file` compiled as a strict Node16 consumer of the package (`extra`: more compiler options). */
function typeErrors(file: string, extra: ts.CompilerOptions = {}): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    target: ts.ScriptTarget.ES2022,
    types: ['node'],
    typeRoots: [path.join(ROOT, 'node_modules', '@types')],
    skipLibCheck: true,
    ...extra,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

/**
 * The client's emitted declarations (`npm run build` emits them with tsconfig.sdk.json) serve an
 * application that imports `actor-task-scheduler/client` through the package's `exports`: they
 * reach no server package, and a strict consumer type-checks against them.
 */
describe('declarations of the SDK client', function () {
  this.timeout(120_000);
  const dir = tempDir();
  after(() => dir.remove());

  it('import only node: modules and json-schema-to-ts, a dependency of the package', () => {
    expect(fs.existsSync(ENTRY), `${ENTRY} (run npm run build)`).to.equal(true);
    const { files, packages } = declarationClosure(ENTRY);
    for (const f of files) expect(fs.existsSync(f), f).to.equal(true);
    const foreign = [...packages].filter((p) => !p.startsWith('node:') && p !== 'json-schema-to-ts');
    expect(foreign).to.deep.equal([]);
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.dependencies).to.have.property('json-schema-to-ts');
    expect(pkg.exports['./client']).to.deep.equal({ types: './dist/src/sdk/client/index.d.ts', default: './dist/src/sdk/client/index.js' });
  });

  it('type-check a strict consumer that imports the package by name, and refuse a wrong body', () => {
    linkPackage(dir.path);
    const consumer = path.join(dir.path, 'app.ts');
    fs.writeFileSync(
      consumer,
      [
        "import { createClient, NotFoundError, type TaskView } from 'actor-task-scheduler/client';",
        "const client = createClient({ url: 'http://127.0.0.1:8080', retry: { maxAttempts: 2 } });",
        'export async function run(): Promise<string> {',
        "  const ack = await client.tasks.submit({ task_type: 'email', priority: 'high', payload: { to: 'a' } });",
        '  const done: TaskView = await client.tasks.wait(ack.task_id, { timeoutMs: 1000 });',
        '  const page = await client.crons.list({ enabled: true, limit: 10 });',
        '  try { await client.deadLetters.replay(done.task_id); } catch (e) { if (e instanceof NotFoundError) return e.code; }',
        '  return `${done.status} ${page.cron_tasks.length}`;',
        '}',
        '// @ts-expect-error priority outside the schema',
        "export const bad = () => client.tasks.submit({ task_type: 'x', priority: 'urgent' });",
      ].join('\n'),
    );
    expect(typeErrors(consumer)).to.deep.equal([]);
  });

  it('type-check the documented options from the environment under exactOptionalPropertyTypes (undefined is the same as left out)', () => {
    linkPackage(dir.path);
    const consumer = path.join(dir.path, 'exact.ts');
    fs.writeFileSync(
      consumer,
      [
        "import { createClient } from 'actor-task-scheduler/client';",
        "import { createWorker } from 'actor-task-scheduler/worker';",
        "export const client = createClient({ url: 'http://127.0.0.1:8080', apiKey: process.env.SCHEDULER_API_KEY, tls: { ca: process.env.CA } });",
        'export const worker = createWorker({',
        "  url: 'http://127.0.0.1:8080',",
        '  apiKey: process.env.SCHEDULER_API_KEY,',
        "  queue: 'jobs',",
        '  concurrency: process.env.N ? Number(process.env.N) : undefined,',
        '  workerId: process.env.WORKER_ID,',
        '  handlers: { noop: async () => null },',
        '});',
      ].join('\n'),
    );
    expect(typeErrors(consumer, { exactOptionalPropertyTypes: true })).to.deep.equal([]);
  });
});
