/** Skeleton only (removed when every operation is written): the error a stub operation throws. */
export function notWritten(op: string): Error {
  return new Error(`PostgresStore.${op} is not written yet`);
}
