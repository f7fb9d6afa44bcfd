import type { Logger } from 'pino';
import { BusHandlers } from '../bus-handlers';
import type { BusHandler, CoordinationBus } from '../coordination-bus';
import { Channel, CHANNELS, CoordinationMessages } from '../messages';
import { channelNames, encodeMessage } from './notify-payload';
import type { PgCoordinationMetrics } from './pg-coordination-metrics';
import type { PgListener } from './pg-listener';

/** What the bus needs of its connection ({@link PgListener}). */
export type NotifyConnection = Pick<PgListener, 'up' | 'query' | 'start' | 'onNotification'>;

/** Settings of a {@link PostgresBus}. */
export interface PostgresBusOptions {
  /** The store's schema: it names the channels ({@link channelNames}); default `public`. */
  schema?: string;
  /** Notifications waiting to be sent beyond which new messages are dropped (default 10,000). */
  maxQueued?: number;
  /** Most notifications sent by one statement (default 500). */
  maxBatch?: number;
  /** Largest payload in bytes (default 7999, NOTIFY_PAYLOAD_LIMIT; tests lower it). */
  payloadLimit?: number;
}

/** Messages waiting to be sent, and how their publishers learn the outcome. */
interface Pending {
  channel: Channel;
  payloads: string[];
  settle: (sent: number) => void;
}

/**
 * The {@link CoordinationBus} over PostgreSQL LISTEN/NOTIFY, for cluster mode on the PostgreSQL
 * store without Redis: channels `scheduler.<schema>.wake|cancel|ended` ({@link channelNames}),
 * payloads of at most 7999 bytes (a large `wake` or `ended` is split, notify-payload.ts).
 *
 * Publishing never blocks its caller on the database: messages join a queue that one statement at
 * a time sends (`SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[])`), so messages
 * published while a statement is out travel together in the next one. A message published while
 * the connection is down, or when the queue is full, or whose statement fails, is dropped and
 * counted. PostgreSQL delivers a notification to every session LISTENing on its channel when the
 * sending statement commits, this node's own session included: those are recognised by `from`
 * and dropped. Within one statement, notifications identical in channel and payload are delivered
 * once (PostgreSQL folds them); a repeated identical message says nothing new.
 */
export class PostgresBus implements CoordinationBus {
  private readonly handlers: BusHandlers;
  private readonly names: Record<Channel, string>;
  private readonly byName: Map<string, Channel>;
  private queue: Pending[] = [];
  private queued = 0;
  private sending = false;
  private started = false;

  /** @param nodeId this node's id (the `from` of its messages) */
  constructor(
    private readonly connection: NotifyConnection,
    readonly nodeId: string,
    private readonly log: Logger,
    private readonly metrics?: Pick<PgCoordinationMetrics, 'messages'>,
    private readonly options: PostgresBusOptions = {},
  ) {
    this.handlers = new BusHandlers(nodeId, log);
    this.names = channelNames(options.schema ?? 'public');
    this.byName = new Map(CHANNELS.map((c) => [this.names[c], c]));
    connection.onNotification((name, payload) => this.receive(name, payload));
  }

  /** The NOTIFY channel of `channel`. */
  channelName(channel: Channel): string {
    return this.names[channel];
  }

  /** @inheritdoc */
  publish<C extends Channel>(channel: C, msg: Omit<CoordinationMessages[C], 'from'>): Promise<number> {
    if (!this.connection.up) return Promise.resolve(this.dropped(channel, 1));
    let payloads: string[];
    try {
      const encoded = encodeMessage(channel, { ...msg, from: this.nodeId } as CoordinationMessages[C], this.options.payloadLimit);
      if (encoded.oversize > 0) {
        this.metrics?.messages.inc({ channel, direction: 'oversize' }, encoded.oversize);
        this.log.debug({ channel, oversize: encoded.oversize }, 'coordination message items too large for NOTIFY left out');
      }
      payloads = encoded.payloads;
    } catch (err) {
      this.log.debug({ err, channel }, 'coordination message not encoded');
      return Promise.resolve(this.dropped(channel, 1));
    }
    if (payloads.length === 0) return Promise.resolve(0);
    if (this.queued + payloads.length > (this.options.maxQueued ?? 10_000)) return Promise.resolve(this.dropped(channel, payloads.length));
    return new Promise<number>((settle) => {
      this.queue.push({ channel, payloads, settle });
      this.queued += payloads.length;
      void this.send();
    });
  }

  /** @inheritdoc */
  on<C extends Channel>(channel: C, handler: BusHandler<C>): void {
    this.handlers.add(channel, handler);
  }

  /**
   * Connects and LISTENs (the connection is usually up already: the clock samples on it). Returns
   * at once when the server is unreachable; the connection keeps retrying and LISTENs when it comes back.
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.connection.start();
  }

  /** Sends the queue, one statement of at most `maxBatch` notifications at a time. */
  private async send(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.take(this.options.maxBatch ?? 500);
        const channels: string[] = [];
        const texts: string[] = [];
        for (const p of batch) {
          for (const text of p.payloads) {
            channels.push(this.names[p.channel]);
            texts.push(text);
          }
        }
        let ok = false;
        try {
          await this.connection.query('SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS n(c, p)', [channels, texts]);
          ok = true;
        } catch (err) {
          this.log.debug({ err, notifications: texts.length }, 'coordination messages not published');
        }
        for (const p of batch) {
          if (ok) this.metrics?.messages.inc({ channel: p.channel, direction: 'published' }, p.payloads.length);
          p.settle(ok ? p.payloads.length : this.dropped(p.channel, p.payloads.length));
        }
      }
    } finally {
      this.sending = false;
    }
  }

  /** The next messages of the queue, at least one, up to `max` notifications. */
  private take(max: number): Pending[] {
    let n = 0;
    let i = 0;
    while (i < this.queue.length && (i === 0 || n + this.queue[i].payloads.length <= max)) n += this.queue[i++].payloads.length;
    this.queued -= n;
    return this.queue.splice(0, i);
  }

  private dropped(channel: Channel, notifications: number): 0 {
    this.metrics?.messages.inc({ channel, direction: 'dropped' }, notifications);
    return 0;
  }

  private receive(name: string, payload: string): void {
    const channel = this.byName.get(name);
    if (!channel) return;
    const result = this.handlers.deliver(channel, payload);
    if (result === 'invalid') this.metrics?.messages.inc({ channel, direction: 'invalid' });
    else if (result === 'delivered') this.metrics?.messages.inc({ channel, direction: 'received' });
  }
}
