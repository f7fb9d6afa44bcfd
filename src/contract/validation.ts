import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import { clipEcho, ValidationError } from '../domain/errors';
import { TENANT_ID_RULE } from '../domain/tenant-id';
import { LIMIT_REASON } from './page-limit';
import { WELL_FORMED_TEXT, WELL_FORMED_TEXT_REASON } from './well-formed-text';

const ISO_REASON = 'must be an ISO-8601 date-time with a UTC offset, e.g. 2026-01-01T09:00:00Z';
/** A query string turns an unescaped `+` into a space: the likely cause of a `since` with a `+hh:mm` offset refused. */
const ISO_QUERY_REASON = `${ISO_REASON} (in a URL, write a + offset as %2B)`;

/** What a field's pattern means, in words (instead of the regular expression). */
const PATTERN_REASONS: Readonly<Record<string, string>> = {
  scheduled_at: ISO_REASON,
  since: ISO_QUERY_REASON,
  from: ISO_REASON,
  limit: LIMIT_REASON,
  preview: 'must be a whole number from 1 to 100',
  attempt: 'must be an attempt number: a whole number from 1',
  tenant_id: TENANT_ID_RULE,
};

/** A JSON Schema type name in words (`integer`: a whole number). */
const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'true or false',
  object: 'a JSON object',
  array: 'an array',
  null: 'null',
};

/**
 * Ajv's wording of a size or type rule (`must NOT have fewer than 1 properties`, `must be
 * number,null`) in plain words, or null for the other keywords (their wording is kept).
 */
function wordedRule(e: ErrorObject): string | null {
  const limit = (e.params as { limit?: number }).limit;
  switch (e.keyword) {
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `must be at least ${limit} characters long`;
    case 'maxLength':
      return `must be at most ${limit} characters long`;
    case 'minItems':
      return limit === 1 ? 'must not be empty: give at least one item' : `must hold at least ${limit} items`;
    case 'maxItems':
      return `must hold at most ${limit} items`;
    case 'minProperties':
      return limit === 1 ? 'must name at least one field' : `must name at least ${limit} fields`;
    case 'maxProperties':
      return `must name at most ${limit} fields`;
    case 'type': {
      const raw = (e.params as { type?: string | string[] }).type ?? [];
      const types = (Array.isArray(raw) ? raw : String(raw).split(',')).map((t) => TYPE_WORDS[t] ?? t);
      return types.length === 0 ? null : `must be ${types.join(' or ')}`;
    }
    default:
      return null;
  }
}

/**
 * The first Ajv (or fastify validation) error as a readable path below the validated value
 * (`tasks[3].priority`; `''` for the value itself) and a reason in words.
 * @param context fastify's `validationContext` (`body`, `querystring`, `params`, `headers`), when known
 */
function firstProblem(errors: ReadonlyArray<ErrorObject>, context?: string): { field: string; reason: string } {
  const e = errors[0];
  let field = e.instancePath
    .split('/')
    .slice(1)
    .map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `.${seg.replace(/~1/g, '/').replace(/~0/g, '~')}`))
    .join('')
    .replace(/^\./, '');
  let reason = e.message ?? 'is invalid';
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    field = field ? `${field}.${missing}` : missing;
    reason = 'is required';
  } else if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    field = field ? `${field}.${extra}` : extra;
    reason = 'is not a known field';
  } else if (e.keyword === 'enum') {
    reason = `must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  } else if (e.keyword === 'pattern' && (e.params as { pattern?: string }).pattern === WELL_FORMED_TEXT) {
    reason = WELL_FORMED_TEXT_REASON;
  } else if (e.keyword === 'pattern') {
    reason = PATTERN_REASONS[field.split('.').pop() as string] ?? reason;
  } else if (e.keyword === 'type' && context === 'querystring') {
    // A query parameter arrives as a string, or as an array when it is given more than once.
    reason = 'is given more than once: give it once';
  } else {
    reason = wordedRule(e) ?? reason;
  }
  return { field, reason };
}

/**
 * Turns the first Ajv (or fastify validation) error into a {@link ValidationError} whose
 * `details.field` is a readable path such as `tasks[3].priority` (query parameters by their name,
 * e.g. `limit`: the same names the actor-message API uses; `body` for the whole body).
 * @param context fastify's `validationContext` (`body`, `querystring`, `params`, `headers`), when known
 */
export function validationErrorOf(errors: ReadonlyArray<ErrorObject>, context?: string): ValidationError {
  const { field, reason } = firstProblem(errors, context);
  // A field name is quoted back cut to ECHO_MAX characters; an empty one names the whole part.
  return new ValidationError(field ? clipEcho(field) : context === 'querystring' ? 'query' : 'body', reason);
}

/**
 * Compiles JSON Schemas with the options the REST layer uses too: no type coercion, no removal of
 * unknown fields, no defaults injected (defaults are applied by the service, visibly).
 */
export class SchemaValidator {
  private readonly ajv = new Ajv({ allErrors: false, coerceTypes: false, removeAdditional: false, useDefaults: false, strict: false });
  private readonly cache = new Map<object, ValidateFunction>();

  /**
   * @param at where `value` sits in the request (`tasks[2].payload`), prefixed to the field named
   *   in the error; absent: `value` is the request body or query itself
   * @throws ValidationError naming the first offending field
   */
  assert(schema: object, value: unknown, at?: string): void {
    const fn = this.compiled(schema);
    if (fn(value)) return;
    if (at === undefined) throw validationErrorOf(fn.errors ?? []);
    const { field, reason } = firstProblem(fn.errors ?? []);
    throw new ValidationError(clipEcho(field === '' ? at : field.startsWith('[') ? `${at}${field}` : `${at}.${field}`), reason);
  }

  /**
   * As {@link assert} for a request's query parameters (REST, or the same object from an actor
   * message): a parameter given twice (an array) is named as such and an empty name as `query`,
   * as fastify's own query validation answers.
   * @throws ValidationError naming the first offending parameter
   */
  assertQuery(schema: object, query: unknown): void {
    for (const [name, value] of Object.entries(query ?? {})) {
      if (Array.isArray(value)) throw new ValidationError(name ? clipEcho(name) : 'query', 'is given more than once: give it once');
    }
    const fn = this.compiled(schema);
    if (fn(query)) return;
    const { field, reason } = firstProblem(fn.errors ?? []);
    throw new ValidationError(field ? clipEcho(field) : 'query', reason);
  }

  /**
   * Compiles `schema` now (kept for later checks), so a schema given at start-up is known to work.
   * @throws Error (Ajv's) when it is not a JSON Schema Ajv can compile
   */
  compile(schema: object): void {
    this.compiled(schema);
  }

  private compiled(schema: object): ValidateFunction {
    let fn = this.cache.get(schema);
    if (!fn) {
      fn = this.ajv.compile(schema);
      this.cache.set(schema, fn);
    }
    return fn;
  }
}
