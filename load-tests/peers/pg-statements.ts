/**
 * `--pg-statements`: what our service asked of PostgreSQL in one scenario, from pg_stat_statements
 * on the bench's own cluster (loaded by ensurePostgres). Deterministic figures where rates are
 * noisy: statements, rows, execution and planning time per 1,000 tasks, by statement.
 */
import { Client } from 'pg';
import { round } from '../bench/stats';

/** One statement's figures over a scenario, per 1,000 tasks (`query`: its first 100 characters, spaces folded). */
export interface StatementFigures {
  query: string;
  calls: number;
  rows: number;
  exec_ms: number;
  plan_ms: number;
}

/** A scenario's pg_stat_statements reading: begun (reset) before it, read after it. */
export class PgStatements {
  private constructor(
    private readonly client: Client,
    private readonly database: string,
  ) {}

  /** Connects to `url` (the service's database, superuser) and creates the extension there. */
  static async open(url: string): Promise<PgStatements> {
    const client = new Client({ connectionString: url, application_name: 'bench-pg-statements' });
    await client.connect();
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    return new PgStatements(client, new URL(url).pathname.slice(1));
  }

  /** Forgets what was counted so far (the scenario starts). */
  async begin(): Promise<void> {
    await this.client.query('SELECT pg_stat_statements_reset()');
  }

  /** The service's statements since {@link begin}, per 1,000 of `tasks`, the costliest first, and their totals. */
  async end(tasks: number): Promise<{ totals: Omit<StatementFigures, 'query'>; top: StatementFigures[] }> {
    const { rows } = await this.client.query<{ query: string; calls: string; rows: string; exec: number; plan: number }>(
      `SELECT s.query, s.calls::text, s.rows::text, s.total_exec_time AS exec, s.total_plan_time AS plan
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid JOIN pg_roles r ON r.oid = s.userid
       WHERE d.datname = $1 AND s.query NOT LIKE '%pg_stat_statements%'
       ORDER BY s.total_exec_time + s.total_plan_time DESC`,
      [this.database],
    );
    const k = 1000 / tasks;
    const fig = (r: (typeof rows)[number]): StatementFigures => ({
      query: r.query.replace(/\s+/g, ' ').slice(0, 100),
      calls: round(Number(r.calls) * k, 1) as number,
      rows: round(Number(r.rows) * k, 1) as number,
      exec_ms: round(r.exec * k, 2) as number,
      plan_ms: round(r.plan * k, 2) as number,
    });
    const all = rows.map(fig);
    const sum = (f: (s: StatementFigures) => number) =>
      round(
        all.reduce((a, s) => a + f(s), 0),
        2,
      ) as number;
    return {
      totals: { calls: sum((s) => s.calls), rows: sum((s) => s.rows), exec_ms: sum((s) => s.exec_ms), plan_ms: sum((s) => s.plan_ms) },
      top: all.slice(0, 12),
    };
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}
