import type { Config } from '../config';
import { CronPageView, CronPreviewView, CronRunPageView, CronView, cronJson, fireJson } from '../contract/cron-json';
import {
  cronCreateSchema,
  cronPatchSchema,
  cronPreviewSchema,
  cronRunsQuerySchema,
  getCronQuerySchema,
  listCronsQuerySchema,
} from '../contract/cron-schemas';
import { LAST_RFC3339_MS, NOT_A_DATE_TIME, parseIsoWithOffset } from '../contract/iso-date';
import { iso } from '../contract/task-json';
import { SchemaValidator } from '../contract/validation';
import type {
  CronCreateBody,
  CronPatchBody,
  CronPreviewBody,
  CronRunsQuery,
  GetCronQuery,
  ListCronsQuery,
  ServiceQuery,
} from '../contract/types';
import { Clock } from '../domain/clock';
import { CronRecord, TaskTemplate } from '../domain/cron/cron-definition';
import { CronSchedule, describeCronRules, parseCronSchedule } from '../domain/cron/cron-schedule';
import { canonicalTimeZone } from '../domain/cron/zone-offset';
import { assertCronSteps } from '../domain/cron/field-steps';
import { assertCronCanFire } from '../domain/cron/never-fires';
import { CronNotFoundError, ServiceUnavailableError, StoreContendedError, ValidationError } from '../domain/errors';
import { partitionOf } from '../domain/partition';
import { uuidv7 } from '../domain/task-id';
import { CronChanges } from '../storage/cron-store';
import { Store } from '../storage/store';
import { buildNewTask, Submission } from './build-task';
import type { CronGateway } from './ports';
import type { PayloadChecks } from '../handlers/payload-schemas';
import { pageLimit } from '../contract/page-limit';
import { Caller, canAccess, OPEN_CALLER } from '../tenancy/caller';
import { tenantFilter, withCallerTenant } from '../tenancy/scope';

export interface CronServiceDeps {
  store: Store;
  clock: Clock;
  config: Config;
  /** Registered task types (a definition's `task_type` must be one). */
  taskTypes: ReadonlySet<string>;
  /** The built-in types' payload checks, applied to a definition's template (none: not checked). */
  payloads?: PayloadChecks;
  gateway: CronGateway;
}

/** Definition fields (API names) that are not part of the task template. */
const DEFINITION_KEYS = ['name', 'cron_expression', 'timezone', 'overlap_policy', 'catch_up', 'max_catch_up', 'enabled'] as const;

const DEFAULT_PREVIEW = 5;
const DEFAULT_MAX_CATCH_UP = 100;
/**
 * Reads and merges of one PATCH before it gives up with 503 `STORE_CONTENDED` (each retry follows
 * a write to the definition made in between: another node's edit, or a firing).
 */
const EDIT_TRIES = 8;

/**
 * Cron definitions (docs/DESIGN.md §7) as the REST API and the actor-message API offer them: create, read,
 * list, edit (including pause/resume through `enabled`), delete, fire records, and the preview of
 * fire times computed by exactly the code the evaluator fires with (domain/cron/cron-schedule.ts).
 * Every method validates like the task operations: ValidationError (400) naming the field. Bodies
 * and queries are typed from their schemas (contract/types.ts) and still validated here: REST and
 * the actor messages hand them over unchecked.
 */
export class CronService {
  private readonly validator = new SchemaValidator();
  private accepting = true;
  /** Per definition id, the end of the last edit queued on this node ({@link update}). */
  private readonly updating = new Map<string, Promise<void>>();

  constructor(private readonly deps: CronServiceDeps) {}

  /**
   * Creates a definition. Defaults: timezone `UTC`, overlap_policy `skip`, catch_up `latest`,
   * max_catch_up 100, enabled true; task fields default as for a task. `query.preview` (1..100; none while paused)
   * adds that many next fire times.
   * @returns the definition with `next_fire_time` (and `next_fire_times` when `preview` > 0)
   * @throws ValidationError (cron_expression, timezone, task fields), CronNeverFiresError (400, an
   *   expression no date matches), UnknownTaskTypeError, PayloadTooLargeError (413),
   *   ServiceUnavailableError while shutting down
   */
  async create(body: CronCreateBody, query: ServiceQuery<GetCronQuery> = {}, caller: Caller = OPEN_CALLER): Promise<CronView> {
    if (!this.accepting) throw new ServiceUnavailableError('shutting down');
    const q = stringQuery<GetCronQuery>(query);
    this.validator.assertQuery(getCronQuerySchema, q);
    const preview = q.preview === undefined ? 0 : Number(q.preview);
    this.validator.assert(cronCreateSchema, body);
    const b = withCallerTenant(body, caller);
    const timezone = canonicalTimeZone(b.timezone ?? 'UTC');
    assertCronSteps(b.cron_expression);
    const schedule = parseCronSchedule(b.cron_expression, timezone);
    assertCronCanFire(schedule.expression);
    const template = templateOf(b);
    const now = this.deps.clock.now();
    const task = this.checkTemplate(template, now);
    const id = uuidv7(now);
    const enabled = b.enabled ?? true;
    const cron: CronRecord = {
      id,
      partition: partitionOf(id, this.deps.config.partitions),
      name: b.name,
      cronExpression: schedule.expression,
      timezone,
      template,
      tenantId: task.tenantId,
      overlapPolicy: b.overlap_policy ?? 'skip',
      catchUp: b.catch_up ?? 'latest',
      maxCatchUp: b.max_catch_up ?? DEFAULT_MAX_CATCH_UP,
      enabled,
      nextFireTime: schedule.nextFireTime(now),
      lastFireTime: null,
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.store.createCron(cron);
    this.deps.gateway.cronChanged(id);
    // A paused definition fires never (next_fire_time null), as GET says: its preview is empty.
    return cronJson(cron, preview > 0 ? (enabled ? schedule.nextFireTimes(now, preview) : []) : undefined);
  }

  /**
   * One definition; `query.preview` (1..100) adds the next fire times from now.
   * @throws CronNotFoundError; ValidationError for a bad `preview`
   */
  async get(id: string, query: ServiceQuery<GetCronQuery> = {}, caller: Caller = OPEN_CALLER): Promise<CronView> {
    const q = stringQuery<GetCronQuery>(query);
    this.validator.assertQuery(getCronQuerySchema, q);
    const cron = await this.mustGet(id, caller);
    const count = q.preview === undefined ? 0 : Number(q.preview);
    const fires = count > 0 && cron.enabled ? this.scheduleOf(cron).nextFireTimes(this.deps.clock.now(), count) : undefined;
    return cronJson(cron, fires ?? (count > 0 ? [] : undefined));
  }

  /**
   * Lists definitions newest first. `query`: {enabled (true|false), tenant, limit (1..1000,
   * default 50), cursor}. @throws ValidationError
   */
  async list(query: ServiceQuery<ListCronsQuery> = {}, caller: Caller = OPEN_CALLER): Promise<CronPageView> {
    const q = stringQuery<ListCronsQuery>(query);
    this.validator.assertQuery(listCronsQuerySchema, q);
    const page = await this.deps.store.listCrons({
      enabled: q.enabled === undefined ? undefined : q.enabled === 'true',
      tenantId: tenantFilter(caller, q.tenant),
      limit: pageLimit(q.limit),
      cursor: q.cursor,
    });
    return { cron_tasks: page.crons.map((c) => cronJson(c)), next_cursor: page.nextCursor };
  }

  /**
   * Edits a definition. A new expression or timezone, or a resume (`enabled: true` after a
   * pause), sets the next fire time from now: a paused period is not caught up.
   * @throws CronNotFoundError; ValidationError, CronNeverFiresError (a new expression only: a
   *   stored one keeps its schedule) and the template errors of {@link create}
   */
  update(id: string, body: CronPatchBody, caller: Caller = OPEN_CALLER): Promise<CronView> {
    // One edit of a definition at a time on this node: each reads the definition the last one
    // wrote. Before, PATCHes at once each merged their fields into the same stale read, and the
    // last write undid the others (a payload reverted; a new expression's next fire time computed
    // in the old time zone). Edits through two cluster nodes at once are ordered by the version's
    // compare-and-set in updateNow.
    const before = this.updating.get(id) ?? Promise.resolve();
    const run = before.then(() => this.updateNow(id, body, caller));
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.updating.set(id, settled);
    void settled.then(() => {
      if (this.updating.get(id) === settled) this.updating.delete(id);
    });
    return run;
  }

  /**
   * {@link update}, once the edits before it on this node are done. The edit is merged into the
   * definition as read and written only if its version is still the one read (`ifVersion`); an
   * edit made in between (through another node, or a firing) makes it read and merge again, at most
   * {@link EDIT_TRIES} times. @throws StoreContendedError when the version kept moving
   */
  private async updateNow(id: string, body: CronPatchBody, caller: Caller): Promise<CronView> {
    this.validator.assert(cronPatchSchema, body);
    for (let tries = 1; ; tries++) {
      const current = await this.mustGet(id, caller);
      const now = this.deps.clock.now();
      const changes = this.changesOf(current, body, caller, now);
      const updated = await this.deps.store.updateCron(id, { ...changes, ifVersion: current.version }, now);
      if (updated) {
        this.deps.gateway.cronChanged(id);
        return cronJson(updated);
      }
      if (tries >= EDIT_TRIES) throw new StoreContendedError('the cron definition kept changing while this edit was merged', tries);
    }
  }

  /** The stored changes of the PATCH `b` applied to `current` (see {@link update} for the rules and errors). */
  private changesOf(current: CronRecord, b: CronPatchBody, caller: Caller, now: number): CronChanges {
    const changes: CronChanges = {};
    const expression = b.cron_expression ?? current.cronExpression;
    const timezone = canonicalTimeZone(b.timezone ?? current.timezone);
    if (b.cron_expression !== undefined) assertCronSteps(b.cron_expression); // a stored one keeps firing as saved
    const schedule = parseCronSchedule(expression, timezone);
    if (b.cron_expression !== undefined) assertCronCanFire(schedule.expression);
    if (b.name !== undefined) changes.name = b.name;
    if (b.cron_expression !== undefined) changes.cronExpression = schedule.expression;
    if (b.timezone !== undefined) changes.timezone = timezone;
    if (b.overlap_policy !== undefined) changes.overlapPolicy = b.overlap_policy;
    if (b.catch_up !== undefined) changes.catchUp = b.catch_up;
    if (b.max_catch_up !== undefined) changes.maxCatchUp = b.max_catch_up;
    if (b.enabled !== undefined) changes.enabled = b.enabled;
    const templateChanges: Partial<TaskTemplate> = templateOf(b);
    if (Object.keys(templateChanges).length > 0) {
      const metadata = templateChanges.metadata;
      if (metadata && metadata.tenant_id !== undefined && metadata.tenant_id !== current.tenantId) {
        throw new ValidationError('metadata.tenant_id', 'cannot change: delete the cron task and create it for the other tenant');
      }
      // As at creation, where a tenant's key adds it: the tenant stays in the new metadata (and counts for its cap).
      if (metadata && (current.template.metadata?.tenant_id !== undefined || !caller.admin)) {
        templateChanges.metadata = { ...metadata, tenant_id: current.tenantId };
      }
      changes.template = { ...current.template, ...templateChanges };
      // Metadata saved before the `maxMetadataBytes` cap is checked against it only when changed.
      this.checkTemplate(changes.template, now, metadata === undefined);
    }
    const resumed = b.enabled === true && !current.enabled;
    if (changes.cronExpression !== undefined || changes.timezone !== undefined || resumed) {
      changes.nextFireTime = schedule.nextFireTime(now);
    }
    return changes;
  }

  /** Deletes a definition and its fire records; instances already created stay. @throws CronNotFoundError */
  async delete(id: string, caller: Caller = OPEN_CALLER): Promise<{ cron_id: string; deleted: true }> {
    await this.mustGet(id, caller);
    if (!(await this.deps.store.deleteCron(id))) throw new CronNotFoundError(id);
    this.deps.gateway.cronChanged(id);
    return { cron_id: id, deleted: true };
  }

  /**
   * Fire records, latest first: one per scheduled fire time with its outcome (`created`,
   * `caught_up`, `skipped` + reason), the instance id and its current status.
   * `query`: {limit (1..1000, default 50), cursor}. @throws CronNotFoundError; ValidationError
   */
  async runs(id: string, query: ServiceQuery<CronRunsQuery> = {}, caller: Caller = OPEN_CALLER): Promise<CronRunPageView> {
    const q = stringQuery<CronRunsQuery>(query);
    this.validator.assertQuery(cronRunsQuerySchema, q);
    const limit = pageLimit(q.limit);
    await this.mustGet(id, caller);
    const page = await this.deps.store.listCronFires(id, { limit, cursor: q.cursor });
    return { runs: page.fires.map(fireJson), next_cursor: page.nextCursor };
  }

  /**
   * The next `count` (1..100, default 5) fire instants strictly after `from` (ISO-8601 with
   * offset; default now), in UTC, from the same code that fires crons, with the rules in words.
   * Instants after year 9999 are left out: RFC 3339 cannot write them.
   * @throws ValidationError (cron_expression, timezone, from, count); CronNeverFiresError
   */
  preview(body: CronPreviewBody): CronPreviewView {
    this.validator.assert(cronPreviewSchema, body);
    const b = body;
    const timezone = canonicalTimeZone(b.timezone ?? 'UTC');
    assertCronSteps(b.cron_expression);
    const schedule = parseCronSchedule(b.cron_expression, timezone);
    assertCronCanFire(schedule.expression);
    let from = this.deps.clock.now();
    if (b.from !== undefined) {
      const parsed = parseIsoWithOffset(b.from);
      if (parsed === null) throw new ValidationError('from', NOT_A_DATE_TIME);
      from = parsed;
    }
    return {
      cron_expression: schedule.expression,
      timezone,
      from: iso(from),
      fire_times: schedule
        .nextFireTimes(from, b.count ?? DEFAULT_PREVIEW)
        .filter((t) => t <= LAST_RFC3339_MS)
        .map((t) => iso(t)),
      rules: describeCronRules().split('\n'),
    };
  }

  /** Refuses new definitions from now on (shutdown). */
  stopAccepting(): void {
    this.accepting = false;
  }

  /** The definition, if `caller` may see it. @throws CronNotFoundError (also for another tenant's) */
  private async mustGet(id: string, caller: Caller): Promise<CronRecord> {
    const cron = await this.deps.store.getCron(id);
    if (!cron || !canAccess(caller, cron.tenantId)) throw new CronNotFoundError(id);
    return cron;
  }

  private scheduleOf(cron: CronRecord): CronSchedule {
    return parseCronSchedule(cron.cronExpression, cron.timezone);
  }

  /**
   * The checks a task submission gets (registered type, payload size, depth and schema, defaults).
   * @param keptMetadata the metadata is the stored one, unchanged: not held to `maxMetadataBytes`
   */
  private checkTemplate(template: TaskTemplate, now: number, keptMetadata = false) {
    const config = keptMetadata ? { ...this.deps.config, maxMetadataBytes: Number.POSITIVE_INFINITY } : this.deps.config;
    return buildNewTask(template as Submission, '', now, config, this.deps.taskTypes, this.deps.payloads);
  }
}

/**
 * The task fields of a create or patch body (those present): a whole template for a create body, the
 * fields to change for a patch.
 */
function templateOf(b: CronCreateBody): TaskTemplate;
function templateOf(b: CronPatchBody): Partial<TaskTemplate>;
function templateOf(b: CronPatchBody): Partial<TaskTemplate> {
  const template: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(b)) {
    if (!(DEFINITION_KEYS as readonly string[]).includes(k) && v !== undefined) template[k] = v;
  }
  return template as Partial<TaskTemplate>;
}

/**
 * Query values as strings (REST gives strings; the message API may give numbers). An array (REST:
 * a parameter given twice) is kept as it is, for `assertQuery` to refuse as such. Typed as the
 * query `Q` the schema describes: the caller validates the result with `assertQuery` before it
 * reads a value.
 */
function stringQuery<Q>(query: ServiceQuery<Q>): Q {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    out[k] = Array.isArray(v) ? (v as unknown as string) : v === undefined ? undefined : String(v);
  }
  return out as Q;
}
