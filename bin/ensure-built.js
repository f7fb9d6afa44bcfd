#!/usr/bin/env node
'use strict';
/**
 * Keeps `dist/` in step with its sources without compiling on every start (plain JS: it runs before
 * anything is compiled, with no dependency).
 *
 *   node bin/ensure-built.js           `npm start`'s prestart: runs `npm run build` when dist/ is
 *                                      missing or stale, else prints one line and exits at once
 *   node bin/ensure-built.js --check   exit 0 when dist/ is fresh, 1 (with the reason) when not
 *   node bin/ensure-built.js --begin   first step of `npm run build`: removes dist/ and records the
 *                                      moment the build started (dist/.build-started)
 *   node bin/ensure-built.js --end     last step of `npm run build`: marks the build complete
 *                                      (renames the record to dist/.build-stamp, keeping its mtime)
 *
 * dist/ is fresh when dist/.build-stamp exists (only a build whose every step succeeded writes it:
 * a failed `tsc` still emits JavaScript, so the emitted files alone prove nothing) and no input is
 * newer than the moment that build started (a source saved during the build counts as newer).
 * The inputs are every file and folder under src/ (a folder's mtime moves when a file in it is
 * deleted or renamed), tsconfig.json, package.json and package-lock.json. Files read at run time
 * (config/*.json, ui/) need no build. Paths are relative to the working directory, the package root
 * under npm.
 *
 * Exit codes: 0 fresh or rebuilt; 1 stale (--check); otherwise the build's own exit code.
 */
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = process.cwd();
const DIST = path.join(ROOT, 'dist');
const STARTED = path.join(DIST, '.build-started');
const STAMP = path.join(DIST, '.build-stamp');
const ENTRY = path.join(DIST, 'src', 'main.js');
const INPUT_FILES = ['tsconfig.json', 'package.json', 'package-lock.json'];
const INPUT_DIRS = ['src'];

/** The newest mtime (ms) among `dir`, its sub-folders and files, with the path that has it. */
function newestUnder(dir, newest) {
  const own = fs.statSync(dir);
  if (own.mtimeMs > newest.mtimeMs) newest = { file: dir, mtimeMs: own.mtimeMs };
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = newestUnder(full, newest);
    else {
      const { mtimeMs } = fs.statSync(full);
      if (mtimeMs > newest.mtimeMs) newest = { file: full, mtimeMs };
    }
  }
  return newest;
}

/** The newest input: `{ file, mtimeMs }` (missing inputs are ignored). */
function newestInput() {
  let newest = { file: '', mtimeMs: 0 };
  for (const name of INPUT_FILES) {
    const full = path.join(ROOT, name);
    if (!fs.existsSync(full)) continue;
    const { mtimeMs } = fs.statSync(full);
    if (mtimeMs > newest.mtimeMs) newest = { file: full, mtimeMs };
  }
  for (const name of INPUT_DIRS) {
    const full = path.join(ROOT, name);
    if (fs.existsSync(full)) newest = newestUnder(full, newest);
  }
  return newest;
}

/** Why dist/ must be rebuilt, or null when it is fresh. */
function staleReason() {
  if (!fs.existsSync(STAMP)) return 'dist/ has no completed build';
  if (!fs.existsSync(ENTRY)) return 'dist/src/main.js is missing';
  const builtAt = fs.statSync(STAMP).mtimeMs;
  const newest = newestInput();
  if (newest.mtimeMs > builtAt) return `${path.relative(ROOT, newest.file)} is newer than the build`;
  return null;
}

/** Runs `npm run build` with the npm that runs this script (npm_execpath), else the one on PATH. */
function build() {
  const npmCli = process.env.npm_execpath;
  const [cmd, args] = npmCli && /\.c?js$/.test(npmCli) ? [process.execPath, [npmCli, 'run', 'build']] : ['npm', ['run', 'build']];
  const run = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' && cmd === 'npm' });
  if (run.error) {
    console.error(`[ensure-built] could not run the build: ${run.error.message}`);
    return 1;
  }
  return run.status === null ? 1 : run.status;
}

function main(argv) {
  const mode = argv[0] || '';
  if (mode === '--begin') {
    fs.rmSync(DIST, { recursive: true, force: true });
    fs.mkdirSync(DIST, { recursive: true });
    fs.writeFileSync(STARTED, 'build started; renamed to .build-stamp when every step has succeeded\n');
    return 0;
  }
  if (mode === '--end') {
    if (!fs.existsSync(STARTED)) {
      console.error('[ensure-built] --end without --begin: dist/.build-started is missing');
      return 1;
    }
    fs.renameSync(STARTED, STAMP);
    return 0;
  }
  const reason = staleReason();
  if (mode === '--check') {
    console.error(reason ? `[ensure-built] stale: ${reason}` : '[ensure-built] dist/ is up to date');
    return reason ? 1 : 0;
  }
  if (mode !== '') {
    console.error(`[ensure-built] unknown option ${mode} (use --check, --begin or --end, or none)`);
    return 2;
  }
  if (!reason) {
    console.error('[ensure-built] dist/ is up to date: starting without a build');
    return 0;
  }
  console.error(`[ensure-built] rebuilding: ${reason}`);
  return build();
}

process.exitCode = main(process.argv.slice(2));
