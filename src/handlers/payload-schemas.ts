import { SchemaValidator } from '../contract/validation';
import { ValidationError } from '../domain/errors';
import { BUILTIN_HANDLERS } from './registry';
import { FORBIDDEN_HTTP_METHODS } from './builtins/http';

/**
 * JSON Schemas of what the built-in handlers read from their payload (README, "Using it"; the
 * handlers in `builtins/`): the fields each reads must have the type it needs, so a payload that
 * would fail when it runs (or silently mean something else, such as `times: "2"`, which `fail`
 * reads as "every attempt") is refused at submission, 400 naming the field. Other fields are left
 * to the handler, which ignores them, and `null` is taken wherever the handler reads it as absent.
 * `noop` and `echo` take any payload.
 */
export const BUILTIN_PAYLOAD_SCHEMAS: Readonly<Record<string, object>> = Object.freeze({
  sleep: {
    type: ['object', 'null'],
    properties: { ms: { type: ['number', 'null'], minimum: 0, maximum: 86_400_000 } },
  },
  fail: {
    type: ['object', 'null'],
    properties: {
      message: { type: ['string', 'null'] },
      permanent: { type: ['boolean', 'null'] },
      times: { type: ['number', 'null'], minimum: 0 },
    },
  },
  http: {
    type: 'object',
    required: ['url'],
    properties: {
      url: { type: 'string' },
      method: { type: 'string' },
      headers: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
      body: {},
    },
  },
});

/**
 * The payload checks made at submission: a built-in task type's payload against its schema,
 * unless config maps that type to a handler module of your own (then that module decides), and a
 * configured type's payload against the `payloadSchema` its module exports, if it exports one.
 */
export class PayloadChecks {
  private readonly validator = new SchemaValidator();
  private readonly schemas = new Map<string, object>();

  /**
   * @param configured the `handlers` config (task_type → module path)
   * @param moduleSchemas the payload schemas configured modules export, by task type (`probeHandlerModules`)
   */
  constructor(configured: Readonly<Record<string, string>>, moduleSchemas: Readonly<Record<string, object>> = {}) {
    for (const [taskType, schema] of Object.entries(BUILTIN_PAYLOAD_SCHEMAS)) {
      if (taskType in BUILTIN_HANDLERS && !Object.prototype.hasOwnProperty.call(configured, taskType)) this.schemas.set(taskType, schema);
    }
    for (const [taskType, schema] of Object.entries(moduleSchemas)) {
      if (Object.prototype.hasOwnProperty.call(configured, taskType)) this.schemas.set(taskType, schema);
    }
  }

  /**
   * @param at the payload's place in the request (`payload`, `tasks[3].payload`)
   * @throws ValidationError naming the field, e.g. `tasks[3].payload.ms`
   */
  assert(taskType: string, payload: unknown, at: string): void {
    const schema = this.schemas.get(taskType);
    if (!schema) return;
    this.validator.assert(schema, payload ?? null, at);
    if (taskType === 'http' && BUILTIN_PAYLOAD_SCHEMAS.http === schema) assertHttpTarget(payload as { url: string; method?: string }, at);
  }
}

/** What the `http` handler needs beyond the schema: an http(s) URL (WHATWG URL parsing, as `fetch` does), a method name, headers HTTP can carry. */
function assertHttpTarget(p: { url: string; method?: string }, at: string): void {
  let protocol = '';
  try {
    protocol = new URL(p.url).protocol;
  } catch {
    throw new ValidationError(`${at}.url`, 'is not a valid URL');
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw new ValidationError(`${at}.url`, 'must be an http or https URL');
  if (p.method !== undefined && !/^[A-Za-z]+$/.test(p.method))
    throw new ValidationError(`${at}.method`, 'must be an HTTP method name such as POST');
  if (p.method !== undefined && FORBIDDEN_HTTP_METHODS.has(p.method.toUpperCase()))
    throw new ValidationError(`${at}.method`, `${p.method.toUpperCase()} cannot be sent (fetch refuses CONNECT, TRACE and TRACK)`);
  try {
    new Headers((p as { headers?: Record<string, string> | null }).headers ?? undefined); // throws on a header name or value HTTP cannot carry
  } catch (err) {
    throw new ValidationError(`${at}.headers`, (err as Error).message);
  }
}
