#!/usr/bin/env node
/**
 * Rewrites references in the comments of `src/` that point outside the repository so that they
 * point into it: `DESIGN §N` → `docs/DESIGN.md §N`; `issue N` → the docs page that describes
 * that feature; behaviour case ids (`case C4b`, `cases C5/C6`) → words. Idempotent: run it again
 * after files move (it works on the text, not on paths). Prints each change and a count per kind;
 * `--check` changes nothing and exits 1 when something is left to fix.
 *
 * Usage: node tools/docs/fix-doc-references.js [--check] [root, default: the repository's src/]
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/** Feature areas of the old issue numbers → the page of this repository that describes them. */
const ISSUE_PAGES = {
  3: 'docs/FAILURES.md', // dead-letter queue, audit reconciler
  5: 'docs/TENANTS.md', // tenants, keys, weights, rate limits, backpressure
  7: 'docs/CLUSTER.md', // cluster mode, MongoDB, Redis coordination
  9: 'docs/OPERATIONS.md', // tracing, dashboard, OpenAPI, CLI
};

/** Replacements, most specific first: [kind, pattern, replacement]. */
const RULES = [
  // Case ids of the old behaviour specification, said in words.
  ['case', / \(behaviour case C4b\)\./g, '.'],
  ['case', /\(DESIGN §8, cases C5\/C6\)/g, '(DESIGN §8)'],
  ['case', /\(DESIGN §8,\n(\s*\*\s*)case C5\)\./g, '(DESIGN §8,\n$1failure propagation).'],
  ['case', /\(DESIGN §8, case C6\)/g, '(DESIGN §8)'],
  // Issue numbers with a more precise target than their feature page.
  ['issue', /\(DESIGN §6, issue 7\)/g, '(DESIGN §6; docs/EXTERNAL-QUEUES.md)'],
  ['issue', /\(issue 9, tracing\)/g, '(docs/OPERATIONS.md, "Tracing")'],
  ['issue', /the fairness target of issue 5/g, 'the fairness target of DESIGN §5'],
  // Any other issue number: its feature page.
  ['issue', /\(issue (\d+)\)/g, (m, n) => (ISSUE_PAGES[n] ? `(${ISSUE_PAGES[n]})` : m)],
  // The design, which ships as docs/DESIGN.md (its section numbers are the same).
  ['design', /(?<![\w/.])DESIGN §/g, 'docs/DESIGN.md §'],
];

/** What must not be left in a comment once the rules ran. */
const LEFT = [/(?<![\w/.])DESIGN §/, /\bissue \d+/i, /\bcases? C\d+[a-z]?\b/];

function files(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return files(p);
    return /\.(ts|lua|js)$/.test(e.name) ? [p] : [];
  });
}

const args = process.argv.slice(2);
const check = args.includes('--check');
const root = args.find((a) => !a.startsWith('--')) ?? path.resolve(__dirname, '..', '..', 'src');
const counts = { design: 0, issue: 0, case: 0 };
const left = [];
for (const file of files(root)) {
  const before = fs.readFileSync(file, 'utf8');
  let text = before;
  for (const [kind, pattern, replacement] of RULES) {
    text = text.replace(pattern, (...m) => {
      const out = typeof replacement === 'function' ? replacement(...m) : m[0].replace(new RegExp(pattern.source, pattern.flags.replace('g', '')), replacement);
      if (out !== m[0]) counts[kind] += 1;
      return out;
    });
  }
  text.split('\n').forEach((line, i) => {
    if (LEFT.some((re) => re.test(line))) left.push(`${path.relative(process.cwd(), file)}:${i + 1}: ${line.trim()}`);
  });
  if (text !== before && !check) fs.writeFileSync(file, text);
}
console.log(`${check ? 'would fix' : 'fixed'}: ${counts.design} DESIGN §, ${counts.issue} issue, ${counts.case} case references`);
for (const l of left) console.log(`left: ${l}`);
if (check && (counts.design + counts.issue + counts.case > 0 || left.length > 0)) process.exit(1);
if (left.length > 0) process.exit(1);
