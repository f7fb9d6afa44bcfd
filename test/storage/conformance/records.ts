/** Record helpers for the storage conformance suite: what getTask must return, minus `seq`. */
import { expect } from 'chai';
import { NewTask, TaskRecord } from '../../../src/domain/task';

/** The record getTask must return right after inserting `t`. */
export function freshRecord(t: NewTask): Omit<TaskRecord, 'seq'> {
  return {
    ...t,
    attempts: 0,
    workerId: null,
    startedAt: null,
    completedAt: null,
    durationMs: null,
    result: null,
    error: null,
    cancelRequested: false,
    updatedAt: t.createdAt,
  };
}

export function withoutSeq(r: TaskRecord | null): Omit<TaskRecord, 'seq'> | null {
  if (r === null) return null;
  const { seq, ...rest } = r;
  expect(seq, 'seq').to.be.a('number');
  return rest;
}
