/**
 * The PostgreSQL side of the coordination messages: channel names and payloads that fit NOTIFY.
 *
 * A NOTIFY payload must be shorter than 8000 bytes (PostgreSQL's default build). Messages stay
 * self-contained JSON of the shapes in messages.ts, read by the same `parseMessage` as Redis's: a
 * `wake` whose entries do not fit in one payload is split into several `wake`s of the same
 * partition, an `ended` into several `ended`s (its task and workflow ids spread over them). The
 * receiver needs no store read and a lost part only loses its own entries, which the owner's
 * window read finds anyway. A `grant` is split by its grants the same way: its node claims each
 * part as it comes (the first part answers the lease request, later ones go back to the owner).
 * An item that alone exceeds the limit (a due entry or id of several kB:
 * ids of up to 1000 characters of up to 3 bytes each) is left out and counted; for it, too, the
 * window read or the waiters' re-check stands in.
 */
import { createHash } from 'node:crypto';
import { SCHEMA_NAME } from '../../storage/postgres/schema-name';
import { Channel, CHANNELS, CoordinationMessages } from '../messages';

/** Largest NOTIFY payload (bytes of UTF-8): PostgreSQL refuses 8000 and more. */
export const NOTIFY_PAYLOAD_LIMIT = 7999;

/** Longest channel name (bytes): PostgreSQL identifiers are cut at 63 (NAMEDATALEN − 1). */
const MAX_CHANNEL_BYTES = 63;

/**
 * The NOTIFY channel of each message kind for the store in `schema`: `scheduler.<schema>.<kind>`
 * (e.g. `scheduler.public.wake`), so two schedulers on one database in different schemas never
 * hear each other. A schema name too long to fit is replaced by 16 hex digits of its SHA-1.
 * Channel names are case-sensitive and quoted when LISTENed.
 * @throws Error when `schema` is not a plain schema name (lower-case letters, digits, `_`)
 */
export function channelNames(schema: string): Record<Channel, string> {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid PostgreSQL schema name: ${JSON.stringify(schema)}`);
  const longest = Math.max(...CHANNELS.map((c) => c.length));
  const fits = 'scheduler.'.length + schema.length + 1 + longest <= MAX_CHANNEL_BYTES;
  const space = fits ? schema : createHash('sha1').update(schema).digest('hex').slice(0, 16);
  const names = {} as Record<Channel, string>;
  for (const c of CHANNELS) names[c] = `scheduler.${space}.${c}`;
  return names;
}

/** A message as payloads. */
export interface EncodedMessage {
  /** JSON texts, each at most the limit in bytes, each a whole message of the channel's shape. */
  payloads: string[];
  /** Items (due entries, ids; a whole `cancel`) left out because alone they exceed the limit. */
  oversize: number;
}

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** One list item of a splittable message, with the list it belongs to. */
interface Item {
  list: string;
  value: unknown;
}

/**
 * Packs `items` greedily, in order, into copies of `base` whose lists (`lists`, empty at first)
 * hold them, each copy's JSON at most `limit` bytes. The size is counted exactly: the empty
 * envelope, plus each item's JSON, plus a comma between two items of one list.
 */
function pack(base: Record<string, unknown>, lists: readonly string[], items: readonly Item[], limit: number): EncodedMessage {
  const fresh = () => Object.fromEntries(lists.map((l) => [l, [] as unknown[]])) as Record<string, unknown[]>;
  const empty = bytes(JSON.stringify({ ...base, ...fresh() }));
  if (items.length === 0)
    return empty <= limit ? { payloads: [JSON.stringify({ ...base, ...fresh() })], oversize: 0 } : { payloads: [], oversize: 1 };
  const payloads: string[] = [];
  let oversize = 0;
  let current = fresh();
  let size = empty;
  let count = 0;
  for (const item of items) {
    const b = bytes(JSON.stringify(item.value));
    if (empty + b > limit) {
      oversize++;
      continue;
    }
    let add = b + (current[item.list].length > 0 ? 1 : 0);
    if (size + add > limit) {
      payloads.push(JSON.stringify({ ...base, ...current }));
      current = fresh();
      size = empty;
      count = 0;
      add = b;
    }
    current[item.list].push(item.value);
    size += add;
    count++;
  }
  if (count > 0) payloads.push(JSON.stringify({ ...base, ...current }));
  return { payloads, oversize };
}

/**
 * The payloads that carry `msg` on `channel`, each at most `limit` bytes: one for a message that
 * fits; a `wake`, `ended` or `grant` that does not is split by its lists (see the file's header). A
 * message without items (a `wake` with no entries) is one payload.
 */
export function encodeMessage<C extends Channel>(channel: C, msg: CoordinationMessages[C], limit = NOTIFY_PAYLOAD_LIMIT): EncodedMessage {
  if (channel === 'wake') {
    const m = msg as CoordinationMessages['wake'];
    return pack(
      { from: m.from, partition: m.partition },
      ['entries'],
      m.entries.map((value) => ({ list: 'entries', value })),
      limit,
    );
  }
  if (channel === 'ended') {
    const m = msg as CoordinationMessages['ended'];
    const items = [
      ...m.taskIds.map((value) => ({ list: 'taskIds', value })),
      ...m.workflowIds.map((value) => ({ list: 'workflowIds', value })),
    ];
    return pack({ from: m.from }, ['taskIds', 'workflowIds'], items, limit);
  }
  if (channel === 'grant') {
    const m = msg as CoordinationMessages['grant'];
    const base = { from: m.from, to: m.to, waiterId: m.waiterId, queue: m.queue };
    return pack(
      base,
      ['grants'],
      m.grants.map((value) => ({ list: 'grants', value })),
      limit,
    );
  }
  const text = JSON.stringify(msg);
  return bytes(text) <= limit ? { payloads: [text], oversize: 0 } : { payloads: [], oversize: 1 };
}
