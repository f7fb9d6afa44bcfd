import { TaskHandler } from '../types';

/** Does nothing and returns null. For throughput benchmarks. */
export const noop: TaskHandler = () => null;
