/**
 * `record[key]` when `key` is the record's own property, else undefined. A tenant id or task type
 * is user input and may be named like an `Object.prototype` member (`constructor`, `toString`,
 * `valueOf`): read through a plain index, such a key finds a function of the prototype instead of
 * nothing.
 */
export function ownValue<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
