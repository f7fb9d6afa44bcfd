import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { SystemClock } from '../../src/domain/clock';
import { ValidationError } from '../../src/domain/errors';
import { StartupError } from '../../src/domain/startup-error';
import {
  handlerModuleShape,
  HandlerLoadError,
  importHandlerModule,
  resolveHandlerModule,
  resolveHandlerModules,
} from '../../src/handlers/handler-module';
import { HandlerSchemaError, probeHandlerModules } from '../../src/handlers/handler-probe';
import { PayloadChecks } from '../../src/handlers/payload-schemas';
import type { HandlerContext } from '../../src/handlers/types';
import { tempDir } from '../helpers/temp-dir';

/** The fixtures' sources (test/fixtures/handlers) and the build's compiled TypeScript one. */
const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'handlers');
const COMPILED = path.resolve(__dirname, '..', 'fixtures', 'handlers');
const CONFIG_DIR = path.resolve(__dirname, '..', '..', '..', 'config');
const ctx = { attempt: 1 } as HandlerContext;

const fixture = (taskType: string, file: string) => resolveHandlerModule(taskType, file, FIXTURES);

describe('handler modules: where a configured path points', () => {
  const dir = tempDir();
  before(() => {
    fs.mkdirSync(path.join(dir.path, 'conf', 'handlers'), { recursive: true });
    fs.writeFileSync(path.join(dir.path, 'conf', 'handlers', 'mail.js'), 'module.exports = async () => 1;\n');
    const pkg = path.join(dir.path, 'node_modules', '@acme', 'jobs');
    fs.mkdirSync(path.join(pkg, 'lib'), { recursive: true });
    fs.writeFileSync(
      path.join(pkg, 'package.json'),
      JSON.stringify({ name: '@acme/jobs', exports: { '.': './lib/index.js', './report': './lib/report.js' } }),
    );
    fs.writeFileSync(path.join(pkg, 'lib', 'index.js'), 'module.exports = async () => 1;\n');
    fs.writeFileSync(path.join(pkg, 'lib', 'report.js'), 'module.exports = async () => 2;\n');
  });
  after(() => dir.remove());
  const conf = () => path.join(dir.path, 'conf');

  it('a relative path resolves against the given folder, with or without ./ or its .js', () => {
    const file = path.join(conf(), 'handlers', 'mail.js');
    for (const spec of ['./handlers/mail.js', 'handlers/mail.js', './handlers/mail', '../conf/handlers/mail.js'])
      expect(resolveHandlerModule('send_email', spec, conf()), spec).to.deep.equal({ taskType: 'send_email', written: spec, file });
  });

  it('an absolute path is taken as is; a package name is looked up from the folder up (its exports map)', () => {
    const file = path.join(conf(), 'handlers', 'mail.js');
    expect(resolveHandlerModule('a', file, '/').file).to.equal(file);
    const lib = path.join(dir.path, 'node_modules', '@acme', 'jobs', 'lib');
    expect(resolveHandlerModule('b', '@acme/jobs', conf()).file).to.equal(path.join(lib, 'index.js'));
    expect(resolveHandlerModule('c', '@acme/jobs/report', path.join(conf(), 'handlers')).file).to.equal(path.join(lib, 'report.js'));
  });

  it('a missing module is a start-up error naming the task type, the path as written and where it was looked for', () => {
    const cases: Array<[string, RegExp]> = [
      [
        './handlers/missing.js',
        /^handlers\.send_email: cannot load "\.\/handlers\/missing\.js" \(resolved to \/.*\/conf\/handlers\/missing\.js\): no such module$/,
      ],
      [
        '@acme/absent',
        /^handlers\.send_email: cannot load "@acme\/absent" \(resolved to package "@acme\/absent" looked up from \/.*\/conf\): no such module$/,
      ],
      ['@acme/jobs/hidden', /^handlers\.send_email: cannot load "@acme\/jobs\/hidden" .*is not defined by "exports"/],
    ];
    for (const [spec, message] of cases) {
      let err: unknown;
      try {
        resolveHandlerModule('send_email', spec, conf());
      } catch (e) {
        err = e;
      }
      expect(err, spec).to.be.instanceOf(HandlerLoadError).and.instanceOf(StartupError);
      expect((err as StartupError).exitCode).to.equal(78);
      expect((err as Error).message, spec).to.match(message);
    }
  });

  it('loadConfig: each entry resolves against the folder of the config file that names it; overrides against the working directory', () => {
    const file = path.join(conf(), 'scheduler.json');
    fs.writeFileSync(file, JSON.stringify({ handlers: { send_email: './handlers/mail.js', report: '@acme/jobs/report' } }));
    const config = loadConfig({ configDir: CONFIG_DIR, env: { SCHEDULER_CONFIG: file }, overrides: { handlers: { report: './r.js' } } });
    expect(config.handlerDirs).to.deep.equal({ send_email: conf(), report: process.cwd() });
    expect(resolveHandlerModules(loadConfig({ configDir: CONFIG_DIR, env: { SCHEDULER_CONFIG: file } })).map((r) => r.file)).to.deep.equal([
      path.join(conf(), 'handlers', 'mail.js'),
      path.join(dir.path, 'node_modules', '@acme', 'jobs', 'lib', 'report.js'),
    ]);
    // Files of the config folder (default.json, <NODE_ENV>.json) resolve against that folder.
    fs.writeFileSync(path.join(conf(), 'default.json'), fs.readFileSync(path.join(CONFIG_DIR, 'default.json')));
    fs.writeFileSync(path.join(conf(), 'staging.json'), JSON.stringify({ handlers: { send_email: './handlers/mail.js' } }));
    expect(loadConfig({ configDir: conf(), env: { NODE_ENV: 'staging' } }).handlerDirs).to.deep.equal({ send_email: conf() });
  });
});

describe('handler modules: the formats and shapes that load', () => {
  it('ES modules (.mjs; .js under "type": "module"), CommonJS (.cjs; .js) and compiled TypeScript: handler and payload schema', async () => {
    const cases: Array<[string, string, unknown, Record<string, unknown>, string]> = [
      ['greet', 'greet.mjs', { name: 'Ada' }, { greeting: 'hello, Ada', attempt: 1, format: 'esm' }, 'name'],
      ['shout', 'esm-package/shout.js', { text: 'hi' }, { text: 'HI', format: 'esm-js' }, 'text'],
      ['count', 'count.cjs', { items: [1, 2] }, { length: 2, format: 'cjs' }, 'items'],
      ['sum', './commonjs/sum', { numbers: [1, 2, 3] }, { sum: 6, format: 'cjs-js' }, 'numbers'],
      ['charge', path.join(COMPILED, 'compiled-ts.js'), { order_id: 'ord-1' }, { charged: 'ord-1', attempt: 1, format: 'tsc' }, 'order_id'],
    ];
    for (const [taskType, file, payload, result, required] of cases) {
      const mod = await importHandlerModule(fixture(taskType, file));
      expect(await mod.handler(payload, ctx), file).to.deep.equal(result);
      expect((mod.payloadSchema as { required: string[] }).required, file).to.deep.equal([required]);
    }
  });

  it('a handler without a schema, as before: the module itself, `default` or `handler`', () => {
    const fn = async () => 1;
    for (const ns of [{ default: fn }, { handler: fn }, { default: { handler: fn } }, { default: { __esModule: true, default: fn } }])
      expect(handlerModuleShape(ns)).to.deep.equal({ handler: fn, payloadSchema: undefined });
    expect(() => handlerModuleShape({ default: { payloadSchema: {} } })).to.throw(/exports no handler function/);
    expect(() => handlerModuleShape({ default: fn, payloadSchema: 'object' })).to.throw(/payloadSchema is not a JSON Schema object/);
  });

  it('a module that exports no function or throws while loading: a HandlerLoadError naming it', async () => {
    for (const [file, reason] of [
      ['no-handler.cjs', /exports no handler function/],
      ['throws-on-load.cjs', /the handler module failed to initialise/],
    ] as const) {
      const err = await importHandlerModule(fixture('x', file)).then(
        () => null,
        (e: Error) => e,
      );
      expect(err, file).to.be.instanceOf(HandlerLoadError);
      expect(err?.message)
        .to.match(new RegExp(`^handlers\\.x: cannot load "${file}" \\(resolved to ${FIXTURES}/${file}\\): `))
        .and.match(reason);
    }
  });
});

describe('handler modules: checked at start-up in a child process', () => {
  const clock = new SystemClock();
  const probe = (refs: ReturnType<typeof fixture>[], timeoutMs = 20_000) => probeHandlerModules(refs, { clock, timeoutMs });
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => expect.fail('start-up went on'),
      (e: Error) => e,
    );

  it('returns the schemas the modules export, without running any module in this process', async () => {
    const schemas = await probe([fixture('greet', 'greet.mjs'), fixture('effect', 'side-effect.cjs'), fixture('plain', 'commonjs/sum.js')]);
    expect(Object.keys(schemas)).to.deep.equal(['greet', 'effect', 'plain']);
    expect(schemas.effect).to.deep.equal({ type: 'object' });
    expect((globalThis as { __schedulerSideEffectLoaded?: boolean }).__schedulerSideEffectLoaded).to.equal(undefined);
    expect(await probe([])).to.deep.equal({});
  });

  it('a schema that does not compile, a module that does not load, one that never finishes: start-up errors naming the module', async () => {
    const bad = await refusal(probe([fixture('greet', 'greet.mjs'), fixture('parse', 'bad-schema.mjs')]));
    expect(bad).to.be.instanceOf(HandlerSchemaError).and.instanceOf(StartupError);
    expect(bad.message).to.match(
      /^handlers\.parse: the payloadSchema of "bad-schema\.mjs" \(\/.*\/bad-schema\.mjs\) does not compile: .*type/,
    );
    const throws = await refusal(probe([fixture('boom', 'throws-on-load.cjs')]));
    expect(throws).to.be.instanceOf(HandlerLoadError);
    expect(throws.message).to.match(
      /^handlers\.boom: cannot load "throws-on-load\.cjs" \(resolved to .*\): the handler module failed to initialise$/,
    );
    const stuck = await refusal(probe([fixture('stuck', 'never-loads.mjs')], 1500));
    expect(stuck).to.be.instanceOf(HandlerLoadError);
    expect(stuck.message).to.match(/^handlers\.stuck: .*did not load within 1500 ms \(loading "never-loads\.mjs"\)$/);
  });
});

describe('handler modules: payload schemas checked at submission', () => {
  it("a configured type's payload is checked against its module's schema, naming the field; a built-in overridden by a module loses its own", () => {
    const schema = {
      type: 'object',
      required: ['to'],
      properties: { to: { type: 'string' }, cc: { type: 'array', items: { type: 'string' } } },
    };
    const checks = new PayloadChecks({ send_email: '/x.js', sleep: '/y.js' }, { send_email: schema, unconfigured: { type: 'string' } });
    const fieldOf = (type: string, payload: unknown, at = 'payload') => {
      try {
        checks.assert(type, payload, at);
        return null;
      } catch (e) {
        expect(e).to.be.instanceOf(ValidationError);
        return (e as ValidationError).details.field;
      }
    };
    expect(fieldOf('send_email', {})).to.equal('payload.to');
    expect(fieldOf('send_email', { to: 'a@b.c', cc: ['x', 2] }, 'tasks[2].payload')).to.equal('tasks[2].payload.cc[1]');
    expect(fieldOf('send_email', null)).to.equal('payload');
    expect(fieldOf('send_email', { to: 'a@b.c' })).to.equal(null);
    // `sleep` is mapped to a module without a schema: its built-in checks no longer apply.
    expect(fieldOf('sleep', { ms: 'soon' })).to.equal(null);
    // A schema for a type the config does not map is ignored.
    expect(fieldOf('unconfigured', 5)).to.equal(null);
  });
});
