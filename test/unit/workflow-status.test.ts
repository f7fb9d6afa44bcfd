import { expect } from 'chai';
import { finalWorkflowStatus } from '../../src/domain/workflow';

describe('finalWorkflowStatus', () => {
  it('every task succeeded → SUCCEEDED', () => {
    expect(finalWorkflowStatus({ failed: 0, cancelled: 0, cancelRequested: false })).to.equal('SUCCEEDED');
  });
  it('any FAILED or DEAD → FAILED, even with tasks cancelled upstream_failed', () => {
    expect(finalWorkflowStatus({ failed: 1, cancelled: 3, cancelRequested: false })).to.equal('FAILED');
  });
  it('a task cancelled on its own (no failure) → CANCELLED', () => {
    expect(finalWorkflowStatus({ failed: 0, cancelled: 2, cancelRequested: false })).to.equal('CANCELLED');
  });
  it('a cancel of the workflow by the caller wins', () => {
    expect(finalWorkflowStatus({ failed: 1, cancelled: 0, cancelRequested: true })).to.equal('CANCELLED');
    expect(finalWorkflowStatus({ failed: 0, cancelled: 0, cancelRequested: true })).to.equal('CANCELLED');
  });
});
