import type { ActorRef, ParentActorRef } from 'comedy';

export type { ActorRef };

/**
 * An actor's public API as a message map (Akka: "messages are the public API"): each topic names
 * its request and response types. Actors declare one next to their definition.
 */
export type MessageMap = Record<string, { req: unknown; res: unknown }>;

/**
 * A typed handle over a comedy actor reference: `tell` (fire-and-forget `send`) and `ask`
 * (`sendAndReceive`) accept only the topics and payload types of the actor's {@link MessageMap}.
 */
export class TypedRef<M extends MessageMap> {
  constructor(readonly ref: ActorRef | ParentActorRef) {}

  /** Sends without waiting for the handler. Delivery errors are passed to `onError`. */
  tell<K extends keyof M & string>(topic: K, msg: M[K]['req'], onError?: (err: unknown) => void): void {
    this.ref.send(topic, msg).catch(onError ?? (() => undefined));
  }

  /** Sends and resolves with the handler's return value; rejects with its error. */
  ask<K extends keyof M & string>(topic: K, msg: M[K]['req']): Promise<M[K]['res']> {
    return this.ref.sendAndReceive(topic, msg) as Promise<M[K]['res']>;
  }
}
