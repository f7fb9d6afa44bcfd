/**
 * 014: the overflow hold (backpressure with priority shedding): tasks in state OVERFLOW, found by
 * a partial index in submission order with their tenant, so the release pass reads the oldest
 * held tasks and the guard counts them per tenant from the index alone, however large the rest of
 * the table. The state column is free text, so the new state needs no other change.
 */
export const up = `
CREATE INDEX tasks_overflow ON tasks (seq, tenant_id) WHERE state = 'OVERFLOW';
`;
