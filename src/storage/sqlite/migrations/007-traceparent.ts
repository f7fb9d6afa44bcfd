/**
 * 007: the W3C `traceparent` a task was submitted with (docs/OPERATIONS.md, "Tracing"). Null for tasks without
 * one (and every task stored before this migration). Read by the claim, so each attempt's span
 * joins the submitter's trace.
 */
export const up = `
ALTER TABLE tasks ADD COLUMN traceparent TEXT;
`;
