/**
 * Deepest nesting accepted in a task's payload or metadata, a handler's result and a checkpoint
 * (objects and arrays). Deeper JSON overflows the stack of the recursive steps it crosses
 * (structured clone to the store's thread, the worker channel's `JSON.stringify`).
 */
export const MAX_JSON_DEPTH = 64;

/**
 * True when `value` nests objects/arrays deeper than `max` levels. Iterative, so a hostile
 * 100,000-level document cannot overflow the stack here (it would elsewhere: structured clone and
 * JSON.stringify recurse, which is why such payloads are refused at the door).
 */
export function exceedsJsonDepth(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v as object)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
