/**
 * Whether this Node.js is one the service is built and tested for: 20.x, 22.x or 24.x (package.json
 * `engines`; CI runs the suite on all three lines). The embedded store loads better-sqlite3 12 on
 * Node 20 and 13 on 22 and later (src/storage/sqlite/driver.ts: 12 aborts the process at a garbage
 * collection from Node 24.19 on).
 */

/** Release lines supported, and the highest minor of each (null: any). */
const SUPPORTED: ReadonlyArray<[major: number, maxMinor: number | null]> = [
  [20, null],
  [22, null],
  [24, null],
];

/**
 * @param version a Node.js version as `process.versions.node` gives it (`24.21.0`)
 * @returns one line saying why `version` is outside the supported range, or null when it is inside
 */
export function nodeSupportWarning(version: string): string | null {
  const [major, minor] = version.split('.').map(Number);
  const line = SUPPORTED.find(([m]) => m === major);
  if (line && (line[1] === null || minor <= line[1])) return null;
  return `Node.js ${version} is outside the supported range (20.x, 22.x, 24.x; package.json "engines"): not a release line this build is tested on. README "Set-up".`;
}
