import { MAX_PROGRESS_MESSAGE } from '../domain/progress';

/**
 * JSON Schema of a progress value (domain/progress.ts, whose `progressProblem` also checks
 * `done <= total`): a fraction from 0 to 1, or `{done?, total?, message?}` with at least one field.
 */
export const progressValueSchema = {
  description: 'a fraction from 0 to 1, or `{done?, total?, message?}` (`done <= total`)',
  // if/then/else, not anyOf: a refused object is named by its own problem (`progress.done`, an
  // unknown field), not by the number branch's "must be number".
  if: { type: 'number' },
  then: { minimum: 0, maximum: 1 },
  else: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      done: { type: 'number', minimum: 0 },
      total: { type: 'number', minimum: 0 },
      message: { type: 'string', maxLength: MAX_PROGRESS_MESSAGE },
    },
  },
} as const;
