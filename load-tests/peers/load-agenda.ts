/**
 * Loads Agenda and its Redis backend when an Agenda run starts, not when the bench starts: both
 * are ES modules, which `require` loads only from Node 20.19 on, so a bench of ours and BullMQ
 * alone still runs on an older Node 20. Throws with the Node version needed otherwise.
 */
import type * as AgendaModule from 'agenda';
import type * as RedisBackendModule from '@agendajs/redis-backend';

export function loadAgenda(): { Agenda: typeof AgendaModule.Agenda; RedisBackend: typeof RedisBackendModule.RedisBackend } {
  try {
    // require, not import: loading these ES modules from CommonJS fails on older Node with
    // ERR_REQUIRE_ESM, which is caught below and turned into a clear message.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Agenda } = require('agenda') as typeof AgendaModule;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { RedisBackend } = require('@agendajs/redis-backend') as typeof RedisBackendModule;
    return { Agenda, RedisBackend };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ERR_REQUIRE_ESM')
      throw new Error(
        `Agenda 6 is an ES module: the Agenda runs need Node >= 20.19 (this is ${process.version}); run --systems ours,bullmq`,
      );
    throw err;
  }
}
