/**
 * The MongoDB store's health: a lost connection (the driver's topology has no writable server, or
 * a write failed for the network) is a recoverable `connection_lost` fault; the topology seeing a
 * writable server again ends it. Errors of the network reach the caller as the 503
 * `STORE_UNAVAILABLE`, never as an internal error.
 */
import type { MongoClient, TopologyDescriptionChangedEvent } from 'mongodb';
import type { Clock } from '../../domain/clock';
import { StoreFault, StoreHealth, storeUnavailable } from '../store-health';

/** The driver's error classes that mean "no server answered" (not a refused or invalid write). */
const CONNECTION_ERRORS = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoServerClosedError',
  'MongoPoolClearedError',
]);

/** The servers of a connection string, without credentials or options: `mongodb://db1:27017,db2:27017`. */
export function serversOf(uri: string): string {
  const m = /^(mongodb(?:\+srv)?:\/\/)(?:[^@/]*@)?([^/?]*)/.exec(uri);
  return m ? `${m[1]}${m[2]}` : 'mongodb';
}

/** The `connection_lost` fault a failed call reveals, or null for any other error. @param now epoch ms */
export function mongoFaultOf(err: unknown, target: string, now: number): StoreFault | null {
  const e = err as { name?: unknown; message?: unknown } | null;
  const name = typeof e?.name === 'string' ? e.name : '';
  if (!CONNECTION_ERRORS.has(name)) return null;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return { kind: 'connection_lost', target, cause: `${name}: ${message}`, recoverable: true, since: now };
}

/**
 * Follows the driver's topology (SDAM events, heartbeats every `heartbeatFrequencyMS`): no
 * writable server → `connection_lost`; a writable server again → recovered.
 * @returns a function that stops following it
 */
export function watchTopology(client: MongoClient, health: StoreHealth, target: string, clock: Pick<Clock, 'now'>): () => void {
  const onChange = (event: TopologyDescriptionChangedEvent) => {
    const servers = [...event.newDescription.servers.values()];
    const writable = servers.some((s) => s.isWritable);
    if (writable) {
      health.recovered();
      return;
    }
    // Only after the driver has looked: a server still `Unknown` because no heartbeat has come back yet is not a fault.
    const failed = servers.find((s) => s.error);
    if (!failed) return;
    health.report({
      kind: 'connection_lost',
      target,
      cause: `no writable server: ${failed.address}: ${failed.error?.message ?? 'unreachable'}`,
      recoverable: true,
      since: clock.now(),
    });
  };
  client.on('topologyDescriptionChanged', onChange);
  return () => client.off('topologyDescriptionChanged', onChange);
}

/**
 * `write`'s result; a failure of the network becomes the `connection_lost` fault (recorded in
 * `health`) and its `StoreUnavailableError` (503), and a success ends that fault.
 */
export function watchedWrite<T>(write: Promise<T>, health: StoreHealth, target: string, clock: Pick<Clock, 'now'>): Promise<T> {
  return write.then(
    (result) => {
      health.recovered();
      return result;
    },
    (err: unknown) => {
      const fault = mongoFaultOf(err, target, clock.now());
      if (!fault) throw err;
      health.report(fault);
      throw storeUnavailable(health.fault ?? fault);
    },
  );
}
