import { expect } from 'chai';
import { ValidationError } from '../../../src/domain/errors';
import { httpStatusOf } from '../../../src/contract/error-catalog';
import { DagTask, validateDag } from '../../../src/domain/dag/validate-dag';
import { seededRandom } from '../helpers/fixtures';

const MAX = 10_000;

/** Runs `fn`, expects a ValidationError, and returns it for the detail checks. */
function rejection(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ValidationError);
    const v = err as ValidationError;
    expect(v.code).to.equal('VALIDATION_FAILED');
    expect(httpStatusOf(v.code)).to.equal(400);
    return v;
  }
  expect.fail('expected a ValidationError, nothing was thrown');
}

/** Every task appears once in `order`, after each of its dependencies. */
function expectTopological(tasks: readonly DagTask[], order: readonly string[]): void {
  expect(order).to.have.lengthOf(tasks.length);
  expect(new Set(order).size).to.equal(tasks.length);
  const position = new Map(order.map((id, k) => [id, k]));
  for (const t of tasks) {
    expect(position.has(t.id), `${t.id} in order`).to.equal(true);
    for (const d of t.dependencies ?? []) {
      expect(position.get(d)!, `${d} before ${t.id}`).to.be.lessThan(position.get(t.id)!);
    }
  }
}

/** `cycle` is a real cycle of `tasks`: distinct ids, each a dependency of the next, the last of the first. */
function expectRealCycle(tasks: readonly DagTask[], cycle: readonly string[]): void {
  expect(cycle.length).to.be.greaterThan(1);
  expect(new Set(cycle).size).to.equal(cycle.length);
  const depsOf = new Map(tasks.map((t) => [t.id, new Set(t.dependencies ?? [])]));
  for (let k = 0; k < cycle.length; k++) {
    const from = cycle[k];
    const to = cycle[(k + 1) % cycle.length];
    expect(depsOf.get(to)!.has(from), `${to} depends on ${from}`).to.equal(true);
  }
}

/** Same ids in the same cyclic order, whatever the starting point. */
function expectRotationOf(actual: readonly string[], expected: readonly string[]): void {
  expect(actual).to.have.lengthOf(expected.length);
  const start = actual.indexOf(expected[0]);
  expect(start, `${expected[0]} in ${actual.join(',')}`).to.be.at.least(0);
  expect([...actual.slice(start), ...actual.slice(0, start)]).to.deep.equal(expected);
}

const onboarding: DagTask[] = [
  { id: 'create-account' },
  { id: 'send-welcome-email', dependencies: ['create-account'] },
  { id: 'setup-defaults', dependencies: ['create-account'] },
  { id: 'notify-sales', dependencies: ['send-welcome-email', 'setup-defaults'] },
];

describe('validateDag', () => {
  describe('valid workflows', () => {
    it('plans the onboarding workflow: order, roots, dependents, unmet counts, depths', () => {
      const plan = validateDag(onboarding, MAX);
      expectTopological(onboarding, plan.order);
      expect(plan.order[0]).to.equal('create-account');
      expect(plan.order[3]).to.equal('notify-sales');
      expect(plan.roots).to.deep.equal(['create-account']);
      expect([...plan.unmetCount]).to.deep.equal([
        ['create-account', 0],
        ['send-welcome-email', 1],
        ['setup-defaults', 1],
        ['notify-sales', 2],
      ]);
      expect(plan.dependents.get('create-account')).to.deep.equal(['send-welcome-email', 'setup-defaults']);
      expect(plan.dependents.get('send-welcome-email')).to.deep.equal(['notify-sales']);
      expect(plan.dependents.get('setup-defaults')).to.deep.equal(['notify-sales']);
      expect(plan.dependents.get('notify-sales')).to.deep.equal([]);
      expect([...plan.depth]).to.deep.equal([
        ['create-account', 0],
        ['send-welcome-email', 1],
        ['setup-defaults', 1],
        ['notify-sales', 2],
      ]);
    });

    it('accepts a diamond (C6a): it is not a cycle, and D comes once, after B and C', () => {
      const tasks: DagTask[] = [
        { id: 'D', dependencies: ['B', 'C'] },
        { id: 'C', dependencies: ['A'] },
        { id: 'B', dependencies: ['A'] },
        { id: 'A' },
      ];
      const plan = validateDag(tasks, MAX);
      expectTopological(tasks, plan.order);
      expect(plan.order.filter((id) => id === 'D')).to.have.lengthOf(1);
      expect(plan.order[3]).to.equal('D');
      expect(plan.roots).to.deep.equal(['A']);
      expect(plan.unmetCount.get('D')).to.equal(2);
      expect(plan.depth.get('D')).to.equal(2);
    });

    it('accepts a single task, and several independent roots in input order', () => {
      expect(validateDag([{ id: 'solo' }], 1)).to.deep.include({ order: ['solo'], roots: ['solo'] });
      const plan = validateDag([{ id: 'b' }, { id: 'a', dependencies: [] }, { id: 'c' }], 3);
      expect(plan.roots).to.deep.equal(['b', 'a', 'c']);
      expect(plan.order).to.deep.equal(['b', 'a', 'c']);
    });

    it('de-duplicates a dependency listed twice: counted once, one dependents entry', () => {
      const tasks: DagTask[] = [{ id: 'A' }, { id: 'B', dependencies: ['A', 'A', 'A'] }];
      const plan = validateDag(tasks, MAX);
      expect(plan.unmetCount.get('B')).to.equal(1);
      expect(plan.dependents.get('A')).to.deep.equal(['B']);
      expect(plan.order).to.deep.equal(['A', 'B']);
    });

    it('depth is the longest path from a root, not the shortest', () => {
      // A → B → C → D and A → D: D is at depth 3.
      const tasks: DagTask[] = [
        { id: 'A' },
        { id: 'B', dependencies: ['A'] },
        { id: 'C', dependencies: ['B'] },
        { id: 'D', dependencies: ['A', 'C'] },
      ];
      expect(validateDag(tasks, MAX).depth.get('D')).to.equal(3);
    });

    it('treats ids such as "__proto__" and "constructor" as plain ids', () => {
      const tasks: DagTask[] = [{ id: '__proto__' }, { id: 'constructor', dependencies: ['__proto__'] }];
      const plan = validateDag(tasks, MAX);
      expect(plan.order).to.deep.equal(['__proto__', 'constructor']);
      expect(plan.dependents.get('__proto__')).to.deep.equal(['constructor']);
    });

    it('accepts exactly maxTasks tasks', () => {
      const tasks = Array.from({ length: 5 }, (_, i) => ({ id: `t${i}` }));
      expect(validateDag(tasks, 5).order).to.have.lengthOf(5);
    });
  });

  describe('rejections name the culprits', () => {
    it('rejects an empty workflow (field tasks)', () => {
      const err = rejection(() => validateDag([], MAX));
      expect(err.details).to.include({ field: 'tasks', min: 1 });
    });

    it('rejects more than maxTasks tasks (field tasks, details.max)', () => {
      const tasks = Array.from({ length: 6 }, (_, i) => ({ id: `t${i}` }));
      const err = rejection(() => validateDag(tasks, 5));
      expect(err.details).to.include({ field: 'tasks', max: 5, count: 6 });
    });

    it('rejects duplicate ids, each repeated id listed once', () => {
      const tasks: DagTask[] = [{ id: 'A' }, { id: 'B' }, { id: 'A' }, { id: 'C' }, { id: 'B' }, { id: 'A' }];
      const err = rejection(() => validateDag(tasks, MAX));
      expect(err.details.field).to.equal('tasks');
      expect(err.details.duplicate_ids).to.deep.equal(['A', 'B']);
    });

    it('rejects a dependency on an unknown id (C6d), naming the task and the unknown ids', () => {
      const tasks: DagTask[] = [{ id: 'A' }, { id: 'B', dependencies: ['A', 'ghost', 'phantom', 'ghost'] }];
      const err = rejection(() => validateDag(tasks, MAX));
      expect(err.details.field).to.equal('tasks[1].dependencies');
      expect(err.details.task_id).to.equal('B');
      expect(err.details.unknown_dependencies).to.deep.equal(['ghost', 'phantom']);
    });

    it('rejects a self-dependency Z → Z (C6c), naming every self-dependent task', () => {
      expect(rejection(() => validateDag([{ id: 'Z', dependencies: ['Z'] }], MAX)).details.task_ids).to.deep.equal(['Z']);
      const tasks: DagTask[] = [{ id: 'A' }, { id: 'Y', dependencies: ['A', 'Y'] }, { id: 'Z', dependencies: ['Z'] }];
      const err = rejection(() => validateDag(tasks, MAX));
      expect(err.details.field).to.equal('tasks');
      expect(err.details.task_ids).to.deep.equal(['Y', 'Z']);
    });

    it('rejects X ↔ Y (C6b) with cycle [X, Y] (either rotation)', () => {
      const tasks: DagTask[] = [
        { id: 'X', dependencies: ['Y'] },
        { id: 'Y', dependencies: ['X'] },
      ];
      const err = rejection(() => validateDag(tasks, MAX));
      expect(err.details.field).to.equal('tasks');
      const cycle = err.details.cycle as string[];
      expectRotationOf(cycle, ['X', 'Y']);
      expect(err.message).to.contain('X').and.to.contain('Y');
    });

    it('reports exactly the 3 ids of a 3-cycle inside a larger graph, in execution order', () => {
      // root → P → (Q → R → S → Q) → T → U, plus an unrelated branch root → V.
      const tasks: DagTask[] = [
        { id: 'root' },
        { id: 'V', dependencies: ['root'] },
        { id: 'P', dependencies: ['root'] },
        { id: 'U', dependencies: ['T'] },
        { id: 'T', dependencies: ['S', 'V'] },
        { id: 'S', dependencies: ['R'] },
        { id: 'R', dependencies: ['Q'] },
        { id: 'Q', dependencies: ['P', 'S'] },
      ];
      const err = rejection(() => validateDag(tasks, MAX));
      const cycle = err.details.cycle as string[];
      expect(cycle).to.have.members(['Q', 'R', 'S']);
      expectRotationOf(cycle, ['Q', 'R', 'S']);
      expectRealCycle(tasks, cycle);
      // Deterministic: starts at the cycle id that comes first in the input.
      expect(cycle).to.deep.equal(['S', 'Q', 'R']);
    });

    it('reports one cycle when there are several', () => {
      const tasks: DagTask[] = [
        { id: 'A', dependencies: ['B'] },
        { id: 'B', dependencies: ['A'] },
        { id: 'C', dependencies: ['D'] },
        { id: 'D', dependencies: ['C'] },
      ];
      const cycle = rejection(() => validateDag(tasks, MAX)).details.cycle as string[];
      expect(cycle).to.have.lengthOf(2);
      expectRealCycle(tasks, cycle);
    });

    it('checks in the documented order: duplicates before unknown dependencies before self before cycles', () => {
      const dupAndUnknown: DagTask[] = [{ id: 'A', dependencies: ['ghost'] }, { id: 'A' }];
      expect(rejection(() => validateDag(dupAndUnknown, MAX)).details).to.have.property('duplicate_ids');
      const unknownAndSelf: DagTask[] = [
        { id: 'A', dependencies: ['A'] },
        { id: 'B', dependencies: ['ghost'] },
      ];
      expect(rejection(() => validateDag(unknownAndSelf, MAX)).details).to.have.property('unknown_dependencies');
      const selfAndCycle: DagTask[] = [
        { id: 'A', dependencies: ['B'] },
        { id: 'B', dependencies: ['A'] },
        { id: 'C', dependencies: ['C'] },
      ];
      expect(rejection(() => validateDag(selfAndCycle, MAX)).details).to.have.property('task_ids');
    });

    it('throws RangeError (not a 400) for a maxTasks that is not a positive integer', () => {
      for (const bad of [0, -1, 1.5, Number.NaN]) {
        expect(() => validateDag([{ id: 'A' }], bad)).to.throw(RangeError);
      }
    });
  });

  describe('size (C6e, C6f): iterative, no stack overflow', () => {
    it('validates a chain of 10,000 tasks', () => {
      const n = 10_000;
      const tasks: DagTask[] = Array.from({ length: n }, (_, i) => (i === 0 ? { id: 't0' } : { id: `t${i}`, dependencies: [`t${i - 1}`] }));
      tasks.reverse(); // input order opposite to execution order
      const plan = validateDag(tasks, n);
      expect(plan.roots).to.deep.equal(['t0']);
      expect(plan.order[0]).to.equal('t0');
      expect(plan.order[n - 1]).to.equal(`t${n - 1}`);
      expectTopological(tasks, plan.order);
      expect(plan.depth.get(`t${n - 1}`)).to.equal(n - 1);
    });

    it('reports the whole 10,000-task cycle when a long chain is closed', () => {
      const n = 10_000;
      const tasks: DagTask[] = Array.from({ length: n }, (_, i) => ({ id: `t${i}`, dependencies: [`t${(i + n - 1) % n}`] }));
      const err = rejection(() => validateDag(tasks, n));
      const cycle = err.details.cycle as string[];
      expect(cycle).to.have.lengthOf(n);
      expect(cycle[0]).to.equal('t0');
      expectRealCycle(tasks, cycle);
      expect(err.message.length).to.be.lessThan(500);
    });

    it('validates one task depending on 5,000 others: it comes last', () => {
      const n = 5_000;
      const tasks: DagTask[] = Array.from({ length: n }, (_, i) => ({ id: `up${i}` }));
      tasks.unshift({ id: 'join', dependencies: tasks.map((t) => t.id) });
      const plan = validateDag(tasks, n + 1);
      expect(plan.order[n]).to.equal('join');
      expect(plan.order.filter((id) => id === 'join')).to.have.lengthOf(1);
      expect(plan.roots).to.have.lengthOf(n);
      expect(plan.unmetCount.get('join')).to.equal(n);
      expect(plan.depth.get('join')).to.equal(1);
    });
  });

  describe('random graphs', () => {
    function shuffle<T>(rand: () => number, items: T[]): T[] {
      for (let i = items.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [items[i], items[j]] = [items[j], items[i]];
      }
      return items;
    }

    /** A random DAG: each task depends on up to 3 tasks (repeats possible) earlier in a shuffled order. */
    function randomDag(rand: () => number, n: number): Array<{ id: string; dependencies: string[] }> {
      const ids = shuffle(
        rand,
        Array.from({ length: n }, (_, i) => `n${i}`),
      );
      const tasks = ids.map((id, k) => {
        const count = k === 0 ? 0 : Math.floor(rand() * Math.min(k, 4));
        const dependencies = Array.from({ length: count }, () => ids[Math.floor(rand() * k)]);
        return { id, dependencies };
      });
      return shuffle(rand, tasks); // input order unrelated to the topological one
    }

    for (const seed of [1, 2, 3, 42, 2026]) {
      it(`plans a random DAG consistently (seed ${seed})`, () => {
        const rand = seededRandom(seed);
        const tasks = randomDag(rand, 300);
        const plan = validateDag(tasks, MAX);
        expectTopological(tasks, plan.order);
        for (const t of tasks) {
          const distinct = new Set(t.dependencies);
          expect(plan.unmetCount.get(t.id)).to.equal(distinct.size);
          const expectedDepth = distinct.size === 0 ? 0 : Math.max(...[...distinct].map((d) => plan.depth.get(d)!)) + 1;
          expect(plan.depth.get(t.id)).to.equal(expectedDepth);
          for (const d of distinct) expect(plan.dependents.get(d)).to.include(t.id);
        }
        expect(plan.roots).to.have.members(tasks.filter((t) => t.dependencies.length === 0).map((t) => t.id));
      });

      it(`finds a real cycle after adding a back edge (seed ${seed})`, () => {
        const rand = seededRandom(seed);
        const tasks = randomDag(rand, 300);
        const plan = validateDag(tasks, MAX);
        // The last task with dependencies; follow first dependencies up to a root; make that root
        // depend on it. Every cycle now uses that new edge.
        const byId = new Map(tasks.map((t) => [t.id, t]));
        const late = [...plan.order].reverse().find((id) => byId.get(id)!.dependencies.length > 0)!;
        let ancestor = late;
        while (byId.get(ancestor)!.dependencies.length > 0) ancestor = byId.get(ancestor)!.dependencies[0];
        byId.get(ancestor)!.dependencies.push(late);
        const cycle = rejection(() => validateDag(tasks, MAX)).details.cycle as string[];
        expectRealCycle(tasks, cycle);
        expect(cycle).to.include.members([late, ancestor]);
      });
    }
  });
});
