/**
 * Whether this Node.js is one the service is built and tested for: 20.x, 22.x, or 24.x up to 24.18
 * (package.json `engines`; CI runs the suite on all three lines). From 24.19 on, better-sqlite3 12
 * compiled against that Node aborts the process at a garbage collection (`Assertion failed: (env)
 * != nullptr` in `Statement::~Statement`), so the embedded store's process can die at any moment.
 */

/** Release lines supported, and the highest minor of each (null: any). */
const SUPPORTED: ReadonlyArray<[major: number, maxMinor: number | null]> = [
  [20, null],
  [22, null],
  [24, 18],
];

/**
 * @param version a Node.js version as `process.versions.node` gives it (`24.21.0`)
 * @returns one line saying why `version` is outside the supported range, or null when it is inside
 */
export function nodeSupportWarning(version: string): string | null {
  const [major, minor] = version.split('.').map(Number);
  const line = SUPPORTED.find(([m]) => m === major);
  if (line && (line[1] === null || minor <= line[1])) return null;
  const why =
    major === 24
      ? 'better-sqlite3 12 aborts the process at a garbage collection from 24.19 on'
      : 'not a release line this build is tested on';
  return `Node.js ${version} is outside the supported range (20.x, 22.x, 24.0–24.18; package.json "engines"): ${why}. README "Set-up".`;
}
