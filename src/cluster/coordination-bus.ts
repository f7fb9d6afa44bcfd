import type { Channel, CoordinationMessages } from './messages';

/** A receiver of one channel's messages (from other nodes only). */
export type BusHandler<C extends Channel> = (msg: CoordinationMessages[C]) => void;

/**
 * Typed messages between the nodes of a cluster ({@link CoordinationMessages}: `wake`, `cancel`,
 * `ended`), over Redis pub/sub (`redis/bus.ts`) or, without Redis, PostgreSQL LISTEN/NOTIFY
 * (`postgres/pg-bus.ts`). Both give the same promise, and nothing rests on more: delivery is at
 * most once and only to nodes listening at that moment (a lost wake is found by the owner's next
 * window read, a lost cancel at the running node's next heartbeat, a lost end by the waiters'
 * re-check). A node never receives its own messages; malformed ones are dropped and counted.
 */
export interface CoordinationBus {
  /** This node's id (the `from` of what it publishes). */
  readonly nodeId: string;

  /**
   * Sends `msg` (its `from` is set to this node) to the other nodes. Never throws and never waits
   * for an outage: while the transport is down the message is dropped (counted).
   * @returns how many deliveries the transport reports: Redis, the nodes that received it;
   *   PostgreSQL, the notifications sent (a large message is split, NOTIFY does not count
   *   listeners); 0 when dropped
   */
  publish<C extends Channel>(channel: C, msg: Omit<CoordinationMessages[C], 'from'>): Promise<number>;

  /** Calls `handler` for each valid message from another node on `channel` (a throwing handler is logged). */
  on<C extends Channel>(channel: C, handler: BusHandler<C>): void;

  /**
   * Starts listening on every channel. @returns once listening, or at once when the server is
   * unreachable (it listens when the server comes back). Idempotent.
   */
  start(): Promise<void>;
}
