/**
 * Route option of the routes whose body the service validates (one check shared by REST and the
 * actor messages, against the same schemas; fastify's own pass over a body of up to 1,000 tasks
 * is skipped). The service checks the body, the query (`assertQuery`: a parameter given twice is
 * named as such) and the `traceparent` header (given twice is named as such), but not the path:
 * the path parameters are checked here, as on every other route. Skipping every part (as before)
 * let a NUL in a path id (`PATCH /api/v1/tasks/%00`) reach the store, where PostgreSQL's text
 * cannot hold it and the call answered 500.
 */
import Ajv from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

/** Ajv with the REST layer's options: no type coercion, no removal of unknown fields, no defaults. */
function requestPartCompiler(): FastifySchemaCompiler<object> {
  const ajv = new Ajv({ allErrors: false, coerceTypes: false, removeAdditional: false, useDefaults: false, strict: false });
  return ({ schema, httpPart }) => (httpPart === 'params' ? ajv.compile(schema) : () => true);
}

/** Spread into a route's options: `{schema: {params, body, …}, ...validatedByService()}`. */
export function validatedByService(): { validatorCompiler: FastifySchemaCompiler<object> } {
  return { validatorCompiler: requestPartCompiler() };
}
