import { SchemaValidator } from '../contract/validation';
import { ValidationError } from '../domain/errors';
import { BUILTIN_HANDLERS } from './registry';

/**
 * JSON Schemas of what the built-in handlers read from their payload (README, "Using it"; the
 * handlers in `builtins/`). A payload that breaks one is refused at submission (400 naming the
 * field) instead of being stored and failing when it runs. `noop` and `echo` take any payload.
 */
export const BUILTIN_PAYLOAD_SCHEMAS: Readonly<Record<string, object>> = Object.freeze({
  sleep: {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: { ms: { type: 'number', minimum: 0, maximum: 86_400_000 } },
  },
  fail: {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: { message: { type: 'string' }, permanent: { type: 'boolean' }, times: { type: 'number', minimum: 0 } },
  },
  http: {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: {
      url: { type: 'string' },
      method: { type: 'string' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      body: {},
    },
  },
});

/**
 * The payload checks made at submission: a built-in task type's payload against its schema,
 * unless config maps that type to a handler module of your own (then the module decides).
 */
export class PayloadChecks {
  private readonly validator = new SchemaValidator();
  private readonly schemas = new Map<string, object>();

  /** @param configured the `handlers` config (task_type → module path) */
  constructor(configured: Readonly<Record<string, string>>) {
    for (const [taskType, schema] of Object.entries(BUILTIN_PAYLOAD_SCHEMAS)) {
      if (taskType in BUILTIN_HANDLERS && !Object.prototype.hasOwnProperty.call(configured, taskType)) this.schemas.set(taskType, schema);
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
    if (taskType === 'http') assertHttpTarget(payload as { url: string; method?: string }, at);
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
  if (p.method !== undefined && !/^[A-Za-z]+$/.test(p.method)) throw new ValidationError(`${at}.method`, 'must be an HTTP method name such as POST');
  try {
    new Headers((p as { headers?: Record<string, string> }).headers); // throws on a header name or value HTTP cannot carry
  } catch (err) {
    throw new ValidationError(`${at}.headers`, (err as Error).message);
  }
}
