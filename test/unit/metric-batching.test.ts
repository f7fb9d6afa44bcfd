import { expect } from 'chai';
import { Counter, Registry } from 'prom-client';
import { iso, lastIsoMemo } from '../../src/contract/task-json';
import { incGrouped } from '../../src/observability/inc-grouped';

describe('incGrouped: one counter increment per label set', () => {
  it('gives the same totals as one inc per item', async () => {
    const registry = new Registry();
    const counter = new Counter({ name: 'done_total', help: 'h', labelNames: ['task_type', 'status'], registers: [registry] });
    const items = [
      { type: 'a', status: 'SUCCEEDED' },
      { type: 'b', status: 'SUCCEEDED' },
      { type: 'a', status: 'FAILED' },
      { type: 'a', status: 'SUCCEEDED' },
    ];
    incGrouped(
      counter,
      items,
      (i) => `${i.type}\u0000${i.status}`,
      (i) => ({ task_type: i.type, status: i.status }),
    );
    incGrouped(
      counter,
      [],
      (i: { type: string }) => i.type,
      () => ({}),
    );
    const values = (await counter.get()).values.map((v) => [v.labels.task_type, v.labels.status, v.value]);
    expect(values).to.have.deep.members([
      ['a', 'SUCCEEDED', 2],
      ['b', 'SUCCEEDED', 1],
      ['a', 'FAILED', 1],
    ]);
  });
});

describe('lastIsoMemo', () => {
  it('answers as iso() does, whatever the order of instants', () => {
    const memo = lastIsoMemo();
    for (const ms of [5, 6, 5, 6, 7, 5, null, 0, 0, -1, 8.64e15, 7]) expect(memo(ms)).to.equal(iso(ms));
  });
});
