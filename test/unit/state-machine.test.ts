import { expect } from 'chai';
import { InvalidTransitionError, SchedulerError } from '../../src/domain/errors';
import { httpStatusOf } from '../../src/contract/error-catalog';
import { canTransition, GUARDS, isTerminal, transition, TransitionEvent, TRANSITIONS } from '../../src/domain/state-machine';
import { TASK_STATES, TaskState } from '../../src/domain/task';

const EVENTS = Object.keys(TRANSITIONS) as TransitionEvent[];
const TERMINAL: TaskState[] = ['SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED'];

function expectInvalid(from: TaskState, event: TransitionEvent): void {
  let caught: unknown;
  try {
    transition(from, event);
  } catch (err) {
    caught = err;
  }
  expect(caught, `${event} from ${from} should throw`).to.be.instanceOf(InvalidTransitionError);
  const err = caught as InvalidTransitionError;
  expect(err).to.be.instanceOf(SchedulerError);
  expect(err.code).to.equal('INVALID_TRANSITION');
  expect(httpStatusOf(err.code)).to.equal(409);
  expect(err.details).to.deep.equal({ state: from, event });
}

describe('state machine', () => {
  describe('the DESIGN §3 edges', () => {
    const expected: Array<[TaskState, TransitionEvent, TaskState]> = [
      ['SCHEDULED', 'due', 'PENDING'],
      ['SCHEDULED', 'reschedule', 'SCHEDULED'],
      ['PENDING', 'reschedule', 'SCHEDULED'],
      ['RETRYING', 'reschedule', 'SCHEDULED'],
      ['RETRYING', 'due', 'PENDING'],
      ['PENDING', 'claim', 'RUNNING'],
      ['SCHEDULED', 'dueClaim', 'RUNNING'],
      ['RETRYING', 'dueClaim', 'RUNNING'],
      ['RUNNING', 'succeed', 'SUCCEEDED'],
      ['RUNNING', 'retry', 'RETRYING'],
      ['RUNNING', 'exhaust', 'DEAD'],
      ['RUNNING', 'failPermanently', 'FAILED'],
      ['SCHEDULED', 'cancel', 'CANCELLED'],
      ['PENDING', 'cancel', 'CANCELLED'],
      ['RETRYING', 'cancel', 'CANCELLED'],
      ['BLOCKED', 'cancel', 'CANCELLED'],
      ['OVERFLOW', 'cancel', 'CANCELLED'],
      ['OVERFLOW', 'release', 'PENDING'],
      ['OVERFLOW', 'releaseLater', 'SCHEDULED'],
      ['RUNNING', 'cancelRunning', 'CANCELLED'],
      ['BLOCKED', 'unblock', 'PENDING'],
      ['BLOCKED', 'unblockLater', 'SCHEDULED'],
      ['SCHEDULED', 'upstreamFailed', 'CANCELLED'],
      ['PENDING', 'upstreamFailed', 'CANCELLED'],
      ['RETRYING', 'upstreamFailed', 'CANCELLED'],
      ['BLOCKED', 'upstreamFailed', 'CANCELLED'],
      ['SCHEDULED', 'rescheduleNow', 'PENDING'],
      ['PENDING', 'rescheduleNow', 'PENDING'],
      ['RETRYING', 'rescheduleNow', 'PENDING'],
      ['RUNNING', 'retryNow', 'PENDING'],
      ['BLOCKED', 'releaseQueued', 'PENDING'],
      ['SCHEDULED', 'cancelWorkflow', 'CANCELLED'],
      ['PENDING', 'cancelWorkflow', 'CANCELLED'],
      ['RETRYING', 'cancelWorkflow', 'CANCELLED'],
      ['BLOCKED', 'cancelWorkflow', 'CANCELLED'],
      ['DEAD', 'replay', 'PENDING'],
      ['CANCELLED', 'resume', 'BLOCKED'],
      ['CANCELLED', 'resumeReady', 'PENDING'],
      ['CANCELLED', 'resumeLater', 'SCHEDULED'],
    ];

    for (const [from, event, to] of expected) {
      it(`${from} --${event}--> ${to}`, () => {
        expect(canTransition(from, event)).to.equal(true);
        expect(transition(from, event)).to.equal(to);
      });
    }

    it('the table has exactly these edges (none missing, none extra)', () => {
      const actual = EVENTS.flatMap((event) =>
        (TRANSITIONS[event].from as readonly TaskState[]).map((from) => `${from} ${event} ${TRANSITIONS[event].to}`),
      );
      expect(actual).to.have.members(expected.map(([f, e, t]) => `${f} ${e} ${t}`));
      expect(actual).to.have.lengthOf(expected.length);
    });

    it('every edge listed in TRANSITIONS is allowed by transition()', () => {
      for (const event of EVENTS) {
        for (const from of TRANSITIONS[event].from as readonly TaskState[]) {
          expect(transition(from, event)).to.equal(TRANSITIONS[event].to);
        }
      }
    });

    it('every (state, event) pair not in the table throws InvalidTransitionError', () => {
      let forbidden = 0;
      for (const from of TASK_STATES) {
        for (const event of EVENTS) {
          if ((TRANSITIONS[event].from as readonly TaskState[]).includes(from)) continue;
          expect(canTransition(from, event)).to.equal(false);
          expectInvalid(from, event);
          forbidden++;
        }
      }
      expect(forbidden).to.equal(TASK_STATES.length * EVENTS.length - expected.length);
    });
  });

  describe('representative forbidden transitions', () => {
    const cases: Array<[TaskState, TransitionEvent, string]> = [
      ['SUCCEEDED', 'cancel', 'cancel on a terminal task (API answers 409)'],
      ['SUCCEEDED', 'succeed', 'completing twice'],
      ['PENDING', 'succeed', 'completing a task that never ran'],
      ['SCHEDULED', 'claim', 'claiming before it is due'],
      ['RUNNING', 'claim', 'a duplicated claim'],
      ['RUNNING', 'cancel', 'plain cancel of a running task (needs cancelRunning)'],
      ['RETRYING', 'claim', 'claiming during backoff'],
      ['DEAD', 'due', 'reviving a dead task'],
      ['FAILED', 'retry', 'retrying a permanent failure'],
      ['CANCELLED', 'unblock', 'unblocking a cancelled task'],
      ['PENDING', 'unblock', 'unblocking a task that is not blocked'],
      ['BLOCKED', 'claim', 'claiming a blocked workflow task'],
    ];
    for (const [from, event, why] of cases) {
      it(`${event} from ${from} throws (${why})`, () => expectInvalid(from, event));
    }

    it('the error message names the event and the state', () => {
      expect(() => transition('DEAD', 'claim')).to.throw(InvalidTransitionError, /claim.*DEAD/);
    });
  });

  describe('terminal states', () => {
    // The only ways out of a terminal state: an operator's dead-letter replay, and the workflow
    // resume it triggers for the descendants that task had cancelled.
    const revivals: Partial<Record<TaskState, TransitionEvent[]>> = {
      DEAD: ['replay'],
      CANCELLED: ['resume', 'resumeReady', 'resumeLater'],
    };
    for (const state of TERMINAL) {
      it(`${state} has no outgoing edge but the revivals (${(revivals[state] ?? []).join(', ') || 'none'})`, () => {
        for (const event of (revivals[state] ?? []) as TransitionEvent[])
          expect(canTransition(state, event), `${event} from ${state}`).to.equal(true);
        for (const event of EVENTS.filter((e) => !(revivals[state] ?? []).includes(e))) {
          expect(canTransition(state, event), `${event} from ${state}`).to.equal(false);
          expect(() => transition(state, event)).to.throw(InvalidTransitionError);
        }
      });
    }

    it('isTerminal is true exactly for SUCCEEDED, FAILED, DEAD and CANCELLED', () => {
      for (const state of TASK_STATES) {
        expect(isTerminal(state), state).to.equal(TERMINAL.includes(state));
      }
    });

    it('every non-terminal state has at least one outgoing edge', () => {
      for (const state of TASK_STATES.filter((s) => !TERMINAL.includes(s))) {
        expect(
          EVENTS.some((e) => canTransition(state, e)),
          state,
        ).to.equal(true);
      }
    });
  });

  describe('guards (state-keeping compare-and-sets)', () => {
    it('a PATCH can edit exactly the tasks that have not started: what reschedule moves, plus BLOCKED and OVERFLOW', () => {
      expect([...GUARDS.edit]).to.have.members([...TRANSITIONS.reschedule.from, 'BLOCKED', 'OVERFLOW']);
      expect([...GUARDS.edit]).to.have.members([...TRANSITIONS.cancel.from]);
    });

    it('attempt writes (lease, checkpoint, progress, cancel request) need the running attempt', () => {
      expect([...GUARDS.attempt]).to.deep.equal([...TRANSITIONS.succeed.from]);
    });

    it('the fence covers every non-terminal state but OVERFLOW', () => {
      expect([...GUARDS.fence]).to.have.members(TASK_STATES.filter((s) => !isTerminal(s) && s !== 'OVERFLOW'));
    });
  });
});
