import type Redis from 'ioredis';
import type { Logger } from 'pino';
import { BusHandlers } from '../bus-handlers';
import type { BusHandler, CoordinationBus } from '../coordination-bus';
import { Channel, CHANNELS, CoordinationMessages } from '../messages';
import type { RedisConnection } from './redis-connection';
import type { RedisMetrics } from './redis-metrics';

/**
 * The {@link CoordinationBus} over Redis pub/sub (channels `<prefix>wake`, `<prefix>cancel`,
 * `<prefix>ended`; messages in {@link CoordinationMessages}). Delivery is at most once and only to nodes connected
 * at that moment: nothing rests on it. A lost wake is found by the owner's next window read, a
 * lost cancel by the handler's timeout (the store already says `cancel_requested`).
 *
 * Publishing while Redis is unreachable drops the message (counted); received messages from this
 * node itself, or of the wrong shape, are dropped (counted), never thrown.
 */
export class RedisBus implements CoordinationBus {
  private readonly prefix: string;
  private readonly handlers: BusHandlers;
  private sub: Redis | null = null;
  private subscribed = false;
  private subscribing = false;

  /**
   * @param nodeId this node's id (messages it sent come back to it and are ignored)
   * @param options.prefix channel prefix (default `scheduler:`)
   */
  constructor(
    private readonly connection: RedisConnection,
    readonly nodeId: string,
    private readonly log: Logger,
    private readonly metrics?: RedisMetrics,
    options: { prefix?: string } = {},
  ) {
    this.prefix = options.prefix ?? 'scheduler:';
    this.handlers = new BusHandlers(nodeId, log);
  }

  /** The Redis channel name of `channel`. */
  channelName(channel: Channel): string {
    return `${this.prefix}${channel}`;
  }

  /**
   * Publishes `msg` (its `from` is set to this node). @returns how many nodes received it (0 when
   * dropped: Redis unreachable). Never throws.
   */
  async publish<C extends Channel>(channel: C, msg: Omit<CoordinationMessages[C], 'from'>): Promise<number> {
    if (!this.connection.up) {
      this.metrics?.messages.inc({ channel, direction: 'dropped' });
      return 0;
    }
    try {
      const n = await this.connection.client.publish(this.channelName(channel), JSON.stringify({ ...msg, from: this.nodeId }));
      this.metrics?.messages.inc({ channel, direction: 'published' });
      return n;
    } catch (err) {
      this.log.debug({ err, channel }, 'coordination message not published');
      this.metrics?.messages.inc({ channel, direction: 'dropped' });
      return 0;
    }
  }

  /** Calls `handler` for each valid message from another node on `channel`. */
  on<C extends Channel>(channel: C, handler: BusHandler<C>): void {
    this.handlers.add(channel, handler);
  }

  /**
   * True when {@link start} was called but the channels are not subscribed yet (Redis has not
   * answered since): the node hears no wake-ups or cancels from the others (readiness `degraded`).
   * Once subscribed, ioredis subscribes them again after each reconnection.
   */
  get deaf(): boolean {
    return this.sub !== null && !this.subscribed;
  }

  /**
   * Subscribes to every channel on a dedicated connection (re-subscribed after reconnections).
   * A subscription refused or lost before it was ever made (Redis unreachable at start: the queued
   * SUBSCRIBE fails at the first failed reconnection) is made again when the connection is ready;
   * before, the node never subscribed until restarted and every wake-up for it was lost.
   * @returns once subscribed, or at once when Redis is unreachable (it subscribes when it comes back)
   */
  async start(): Promise<void> {
    if (this.sub) return;
    const sub = this.connection.subscriber();
    this.sub = sub;
    const names = CHANNELS.map((c) => this.channelName(c));
    const byName = new Map(CHANNELS.map((c) => [this.channelName(c), c]));
    sub.on('message', (name: string, text: string) => {
      const channel = byName.get(name);
      if (channel) this.deliver(channel, text);
    });
    sub.on('ready', () => {
      if (!this.subscribed) void this.subscribe(sub, names);
    });
    const subscribed = this.subscribe(sub, names);
    if (this.connection.up) await subscribed;
  }

  private async subscribe(sub: Redis, names: string[]): Promise<void> {
    if (this.subscribing || this.subscribed) return;
    this.subscribing = true;
    try {
      await sub.subscribe(...names);
      this.subscribed = true;
    } catch (err) {
      this.log.warn({ err }, 'coordination channels not subscribed yet; subscribing when Redis answers');
    } finally {
      this.subscribing = false;
    }
  }

  private deliver(channel: Channel, text: string): void {
    const result = this.handlers.deliver(channel, text);
    if (result === 'invalid') this.metrics?.messages.inc({ channel, direction: 'invalid' });
    else if (result === 'delivered') this.metrics?.messages.inc({ channel, direction: 'received' });
  }
}
