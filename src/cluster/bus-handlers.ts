import type { Logger } from 'pino';
import type { BusHandler } from './coordination-bus';
import { Channel, parseMessage } from './messages';

/** What became of one received message. */
export type Received = 'delivered' | 'own' | 'invalid';

/**
 * The handlers a {@link CoordinationBus} holds per channel, and the delivery of a received text to
 * them: parsed and checked ({@link parseMessage}), dropped when it is this node's own or of the
 * wrong shape, else given to every handler (one that throws is logged, the others still run).
 * Shared by the Redis and the PostgreSQL bus, so both deliver alike.
 */
export class BusHandlers {
  private readonly handlers = new Map<Channel, Array<BusHandler<Channel>>>();

  /** @param nodeId this node's id (messages whose `from` is it are dropped) */
  constructor(
    private readonly nodeId: string,
    private readonly log: Logger,
  ) {}

  /** Adds `handler` to `channel`'s. */
  add<C extends Channel>(channel: C, handler: BusHandler<C>): void {
    const list = this.handlers.get(channel) ?? [];
    list.push(handler as unknown as BusHandler<Channel>);
    this.handlers.set(channel, list);
  }

  /** Delivers `text` received on `channel`. Never throws. */
  deliver(channel: Channel, text: string): Received {
    const msg = parseMessage(channel, text);
    if (msg === null) return 'invalid';
    if (msg.from === this.nodeId) return 'own';
    for (const h of this.handlers.get(channel) ?? []) {
      try {
        h(msg);
      } catch (err) {
        this.log.error({ err, channel }, 'coordination message handler failed');
      }
    }
    return 'delivered';
  }
}
