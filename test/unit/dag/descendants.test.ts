import { expect } from 'chai';
import { descendantsOf } from '../../../src/domain/dag/descendants';
import { validateDag } from '../../../src/domain/dag/validate-dag';

describe('descendantsOf', () => {
  // C5: A → {B, C} → D → E, from a validated plan.
  const { dependents } = validateDag(
    [
      { id: 'A' },
      { id: 'B', dependencies: ['A'] },
      { id: 'C', dependencies: ['A'] },
      { id: 'D', dependencies: ['B', 'C'] },
      { id: 'E', dependencies: ['D'] },
    ],
    100,
  );

  it('from B in the diamond gives [D, E] (what upstream_failed cancels, case C5)', () => {
    expect(descendantsOf(['B'], dependents)).to.deep.equal(['D', 'E']);
  });

  it('from A gives every other task once, in breadth-first order', () => {
    expect(descendantsOf(['A'], dependents)).to.deep.equal(['B', 'C', 'D', 'E']);
  });

  it('is empty for a leaf, an unknown id, or no starts', () => {
    expect(descendantsOf(['E'], dependents)).to.deep.equal([]);
    expect(descendantsOf(['nope'], dependents)).to.deep.equal([]);
    expect(descendantsOf([], dependents)).to.deep.equal([]);
  });

  it('never includes a start, even one downstream of another start, and lists shared descendants once', () => {
    expect(descendantsOf(['A', 'D'], dependents)).to.deep.equal(['B', 'C', 'E']);
    expect(descendantsOf(['B', 'C'], dependents)).to.deep.equal(['D', 'E']);
  });

  it('walks a 10,000-task chain and a 5,000-way fan-out without recursion', () => {
    const n = 10_000;
    const chain = new Map<string, string[]>();
    for (let i = 0; i < n - 1; i++) chain.set(`t${i}`, [`t${i + 1}`]);
    const fromChain = descendantsOf(['t0'], chain);
    expect(fromChain).to.have.lengthOf(n - 1);
    expect(fromChain[n - 2]).to.equal(`t${n - 1}`);

    const fan = new Map<string, string[]>([['hub', Array.from({ length: 5_000 }, (_, i) => `leaf${i}`)]]);
    expect(descendantsOf(['hub'], fan)).to.have.lengthOf(5_000);
  });
});
