import { TaskHandler } from '../types';

/** Returns its payload unchanged. */
export const echo: TaskHandler = (payload) => payload;
