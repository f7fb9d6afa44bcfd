import fs from 'node:fs';
import path from 'node:path';
import type Redis from 'ioredis';

/**
 * The coordination Lua scripts, one file per atomic operation (each file's header states its KEYS,
 * ARGV, reply and guarantee). They are read from `src/cluster/redis/scripts/` (the compiler does not
 * copy `.lua` files into `dist/`) and registered on a connection with ioredis `defineCommand`,
 * which runs them by SHA (EVALSHA, falling back to EVAL after a server restart).
 */
export const SCRIPTS = {
  takeTokens: 'take-tokens.lua',
  returnTokens: 'return-tokens.lua',
  acquireSlots: 'acquire-slots.lua',
  renewSlots: 'renew-slots.lua',
} as const;

/** The commands {@link defineScripts} adds to a connection. Numbers are sent as decimal strings. */
export interface ScriptCommands {
  /** take-tokens.lua → [granted, waitMs, serverNowMs]. */
  takeTokens(key: string, rate: number, burst: number, wanted: number): Promise<[number, number, number]>;
  /** return-tokens.lua → tokens in the bucket afterwards. */
  returnTokens(key: string, rate: number, burst: number, count: number): Promise<number>;
  /** acquire-slots.lua → [granted, held]. */
  acquireSlots(key: string, limit: number, wanted: number, ttlMs: number, holder: string): Promise<[number, number]>;
  /** renew-slots.lua (renew the first `count` ids, give back the rest) → the ids lost. */
  renewSlots(key: string, ttlMs: number, count: number, ...ids: string[]): Promise<string[]>;
}

/**
 * The scripts folder: next to this module in the sources, or found by walking up from `dist/`
 * to the package root's `src/cluster/redis/scripts`.
 * @throws Error when no folder holds the scripts
 */
export function scriptsDir(from: string = __dirname): string {
  if (fs.existsSync(path.join(from, SCRIPTS.takeTokens))) return from;
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'src', 'cluster', 'redis', 'scripts');
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(candidate, SCRIPTS.takeTokens))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`coordination scripts not found from ${from}`);
  }
}

/** Registers every script on `client` (one key each) and returns the client typed with them. */
export function defineScripts(client: Redis): Redis & ScriptCommands {
  const dir = scriptsDir();
  for (const [name, file] of Object.entries(SCRIPTS)) {
    client.defineCommand(name, { numberOfKeys: 1, lua: fs.readFileSync(path.join(dir, file), 'utf8') });
  }
  return client as Redis & ScriptCommands;
}
