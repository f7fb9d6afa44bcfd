import fs from 'node:fs';
import path from 'node:path';
import { rendezvousAssignment } from '../../src/domain/rendezvous';
import { ClusterDatabase, ClusterStoreKind, freshClusterDatabase } from './cluster-store';
import { http } from './http';
import { readJsonLines } from './process-files';
import { ServiceProcess, startServiceProcess } from './service-process';
import { tempDir } from './temp-dir';

/** One member of a test cluster: a real service process (`node dist/src/main.js`). */
export interface ClusterNode {
  memberId: string;
  svc: ServiceProcess;
  /** Its data folder (config file, SQLite path unused in cluster mode). */
  dir: string;
}

/** N service processes sharing one fresh database or schema (cluster mode; test/helpers/cluster-store.ts). */
export interface Cluster {
  nodes: ClusterNode[];
  /** The cluster's database (MongoDB) or schema (PostgreSQL): its nodes' store settings, direct reads. */
  db: ClusterDatabase;
  partitions: number;
  leaseTtlMs: number;
  /** A scratch folder removed by {@link Cluster.stop} (side-effect logs, handler modules). */
  scratch: string;
  /** Stops every node still running (SIGCONT first, then SIGTERM), drops the database or schema, removes the folders. */
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** Number of service processes. */
  nodes: number;
  /** The shared store; default `CLUSTER_STORE`'s (test/helpers/cluster-store.ts). */
  store?: ClusterStoreKind;
  /** `LEASE_TTL_MS` of every node (ms); default 3000. */
  leaseTtlMs?: number;
  /** `PARTITIONS`; default 8. */
  partitions?: number;
  /** Extra config keys for every node (written to a config file: `handlers`, `horizonMs`, …). */
  config?: Record<string, unknown>;
  /** Extra environment for every node. */
  env?: Record<string, string>;
  /** More environment for node `i` alone (after `env`). */
  envOf?: (i: number) => Record<string, string>;
  /** Builds the config from the scratch folder (for handler modules written there). */
  configIn?: (scratch: string) => Record<string, unknown>;
}

/**
 * Starts `o.nodes` service processes in cluster mode on the store `o.store` (default: the one
 * `CLUSTER_STORE` names, MongoDB without it; see test/helpers/cluster-store.ts), each on its own free port with
 * `MEMBER_ID=member-<i>`, a short lease TTL and the same fresh database or schema
 * (`cluster_<random>`), and resolves once every one answers `/readyz` 200 (joined). Nodes start
 * one after the other so the join order is `member-0`, `member-1`, … .
 * @throws Error when a node exits early or is not ready in 30 s (the started ones are stopped), or
 *   when the store's server is not named
 */
export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  const db = freshClusterDatabase('cluster', o.store);
  const root = tempDir('scheduler-cluster-');
  const scratch = path.join(root.path, 'scratch');
  fs.mkdirSync(scratch);
  const leaseTtlMs = o.leaseTtlMs ?? 3000;
  const partitions = o.partitions ?? 8;
  const config = { ...(o.configIn?.(scratch) ?? {}), ...(o.config ?? {}) };
  const nodes: ClusterNode[] = [];
  const cluster: Cluster = {
    nodes,
    db,
    partitions,
    leaseTtlMs,
    scratch,
    async stop() {
      await Promise.all(
        nodes.map(async (n) => {
          if (n.svc.child.exitCode === null && n.svc.child.signalCode === null) n.svc.child.kill('SIGCONT');
          await n.svc.stop();
        }),
      );
      root.remove();
      await db.drop();
    },
  };
  try {
    for (let i = 0; i < o.nodes; i++) {
      const dir = path.join(root.path, `node-${i}`);
      fs.mkdirSync(dir);
      const file = path.join(dir, 'cluster-config.json');
      fs.writeFileSync(file, JSON.stringify(config, null, 2));
      const memberId = `member-${i}`;
      const svc = await startServiceProcess(
        dir,
        {
          ...db.env,
          MEMBER_ID: memberId,
          LEASE_TTL_MS: String(leaseTtlMs),
          PARTITIONS: String(partitions),
          SCHEDULER_CONFIG: file,
          ...(o.env ?? {}),
          ...(o.envOf?.(i) ?? {}),
        },
        30_000,
      );
      nodes.push({ memberId, svc, dir });
    }
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

/**
 * The members' warning and error log lines (pino levels 40 and up), the last `max` of each, cut
 * to 300 characters and prefixed with the member id: for a failing assertion's message.
 */
export function memberWarnings(nodes: readonly ClusterNode[], max = 15): string {
  return nodes
    .flatMap((n) =>
      n.svc
        .output()
        .split('\n')
        .filter((l) => /"level":(4|5|6)0/.test(l))
        .slice(-max)
        .map((l) => `${n.memberId}: ${l.slice(0, 300)}`),
    )
    .join('\n');
}

/** Partitions `svc` owns now, from `/readyz` (-1 when it does not answer). */
export async function ownedCount(svc: ServiceProcess): Promise<number> {
  try {
    const r = await http('GET', `${svc.url}/readyz`);
    return r.body?.partitions?.owned ?? -1;
  } catch {
    return -1;
  }
}

/**
 * Polls `check` (every `everyMs`) until it returns a value other than undefined, failing after
 * `timeoutMs`: waits for a state of the system under test, not for a duration.
 */
export async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`not reached in ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Waits until each of the given nodes owns as many partitions as the rendezvous assignment over
 * their member ids gives it (⌊P / n⌋ or ⌈P / n⌉; src/domain/rendezvous.ts), and together every
 * partition: the hand-overs of the joins are done. Resolves with each node's count.
 */
export async function untilBalanced(nodes: ClusterNode[], partitions: number, timeoutMs = 20_000): Promise<number[]> {
  const assignment = rendezvousAssignment(
    nodes.map((n) => n.memberId),
    partitions,
  );
  const shares = nodes.map((n) => assignment.filter((o) => o === n.memberId).length);
  return until(
    `${nodes.length} members own their shares (${shares.join(' / ')}) of ${partitions} partitions`,
    async () => {
      const counts = await Promise.all(nodes.map((n) => ownedCount(n.svc)));
      return counts.every((c, i) => c === shares[i]) ? counts : undefined;
    },
    timeoutMs,
  );
}

/** Sum of a Prometheus metric's samples (all label sets) on `svc`'s /metrics. */
export async function metricSum(svc: ServiceProcess, name: string): Promise<number> {
  const body = await (await fetch(`${svc.url}/metrics`)).text();
  let sum = 0;
  for (const m of body.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?)`, 'gm'))) sum += Number(m[1]);
  return sum;
}

/**
 * Source of a side-effect handler module: appends one JSON line `{id, attempt, member, pid, t}`
 * to `logPath` per successful run (one `appendFileSync` of a short line: O_APPEND, so lines of
 * concurrent workers do not interleave), after `delayMs` (so attempts are really in flight).
 */
export function sideEffectHandlerSource(logPath: string, delayMs = 0): string {
  return `'use strict';
const fs = require('node:fs');
const LOG = ${JSON.stringify(logPath)};
module.exports = async (payload, ctx) => {
  ${delayMs > 0 ? `await new Promise((resolve) => setTimeout(resolve, ${delayMs}));` : ''}
  fs.appendFileSync(LOG, JSON.stringify({ id: ctx.taskId, attempt: ctx.attempt, member: process.env.MEMBER_ID, pid: process.pid, t: Date.now() }) + '\\n');
  return { ok: true };
};
`;
}

/** One line of the side-effect log. */
export interface SideEffect {
  id: string;
  attempt: number;
  member: string;
  pid: number;
  t: number;
}

/** Parses the side-effect log (torn lines, from a process killed mid-write, are returned apart). */
export function readSideEffects(logPath: string): { lines: SideEffect[]; torn: string[] } {
  return readJsonLines<SideEffect>(logPath);
}

/** Every task of `taskType` in `status` (id → stored attempts), through the paginated list. */
export async function listByStatus(url: string, status: string, taskType: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ status, task_type: taskType, limit: '1000', ...(cursor ? { cursor } : {}) });
    const res = await http('GET', `${url}/api/v1/tasks?${q}`);
    if (res.status !== 200) throw new Error(`list answered ${res.status}: ${JSON.stringify(res.body)}`);
    for (const t of res.body.tasks) out.set(t.task_id, t.attempts);
    cursor = res.body.next_cursor;
  } while (cursor);
  return out;
}
