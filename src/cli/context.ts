import fs from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import type { TlsFiles } from '../sdk/transport';
import { ClientOptionError, createClient, SchedulerClient, type ClientOption } from '../sdk/client';
import { nonFiniteNumber, nonFiniteNumberMessage } from '../sdk/json-numbers';
import { Io } from './output';

/** What every command runs with: the client, the output streams and the global flags. */
export interface CliContext {
  client: SchedulerClient;
  io: Io;
}

/** Process-level things the CLI reads, injectable for tests. */
export interface CliEnv {
  env: NodeJS.ProcessEnv;
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream & { isTTY?: boolean };
}

/**
 * Builds the context of a command from its global options (`--url`, `--api-key`, `--json`, and for
 * an https URL `--ca-file`, `--cert-file`, `--key-file`).
 * @throws InvalidArgumentError naming a TLS file that cannot be read, or a URL that is not http(s)
 */
export function contextOf(cmd: Command, cli: CliEnv): CliContext {
  const o = cmd.optsWithGlobals() as {
    url?: string;
    apiKey?: string;
    json?: boolean;
    caFile?: string;
    certFile?: string;
    keyFile?: string;
  };
  const url = o.url ?? cli.env.SCHEDULER_URL ?? 'http://127.0.0.1:8080';
  const apiKey = o.apiKey ?? (cli.env.SCHEDULER_API_KEY || undefined);
  const tls: TlsFiles = {};
  for (const [name, file] of [
    ['ca', o.caFile ?? (cli.env.SCHEDULER_CA_FILE || undefined)],
    ['cert', o.certFile ?? (cli.env.SCHEDULER_CERT_FILE || undefined)],
    ['key', o.keyFile ?? (cli.env.SCHEDULER_KEY_FILE || undefined)],
  ] as const) {
    if (file !== undefined) tls[name] = readTlsFile(file, sourceOf(`tls.${name}`, o));
  }
  let client: SchedulerClient;
  try {
    client = createClient({ url, apiKey, tls });
  } catch (err) {
    if (!(err instanceof ClientOptionError)) throw err;
    throw new InvalidArgumentError(
      `${sourceOf(err.option, o)}: ${err.reason.replace(/tls\.(ca|cert|key)\b/g, (_m, k: TlsName) => TLS_SOURCES[k][0])}`,
    );
  }
  return { client, io: { out: cli.out, err: cli.err, json: o.json ?? false } };
}

/** The CLI flag and environment variable of each TLS file. */
const TLS_SOURCES = {
  ca: ['--ca-file', 'SCHEDULER_CA_FILE'],
  cert: ['--cert-file', 'SCHEDULER_CERT_FILE'],
  key: ['--key-file', 'SCHEDULER_KEY_FILE'],
} as const;
type TlsName = keyof typeof TLS_SOURCES;

/** The flag (when given) or else the environment variable that set a client option. */
function sourceOf(
  option: ClientOption,
  o: { url?: string; apiKey?: string; caFile?: string; certFile?: string; keyFile?: string },
): string {
  if (option === 'url') return o.url !== undefined ? '--url' : 'SCHEDULER_URL';
  if (option === 'apiKey') return o.apiKey !== undefined ? '--api-key' : 'SCHEDULER_API_KEY';
  if (option === 'fetchTimeoutMs') return 'fetchTimeoutMs'; // the CLI does not set it
  const name = option.slice('tls.'.length) as TlsName;
  const given = { ca: o.caFile, cert: o.certFile, key: o.keyFile }[name];
  return TLS_SOURCES[name][given !== undefined ? 0 : 1];
}

/** @param source the flag or variable that named `file`, for the error */
function readTlsFile(file: string, source: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new InvalidArgumentError(`${source}: cannot read ${file}: ${(err as Error).message}`);
  }
}

/** commander argument parser for a JSON value (`--payload '{"a":1}'`). */
export function jsonValue(value: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (err) {
    throw new InvalidArgumentError(`not valid JSON: ${(err as Error).message}`);
  }
  // `1e400` parses as Infinity, which JSON would send as null.
  const odd = nonFiniteNumber(parsed);
  if (odd) throw new InvalidArgumentError(nonFiniteNumberMessage('', odd));
  return parsed;
}

/** commander argument parser for a positive integer. */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

/** commander argument parser for `--batch-size`: 1 to 1,000 (the API's bound on a batch). */
export function batchSizeValue(value: string): number {
  const n = positiveInt(value);
  if (n > 1000) throw new InvalidArgumentError('must be at most 1000 (the API takes 1 to 1,000 tasks a batch)');
  return n;
}

/** commander argument parser for a number. */
export function numberValue(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('must be a number');
  return n;
}

/** commander argument parser for a number of 0 or more (a duration). */
export function nonNegativeNumber(value: string): number {
  const n = numberValue(value);
  if (n < 0) throw new InvalidArgumentError('must be 0 or more');
  return n;
}

/**
 * Reads a JSON file (`-` for stdin). A file of tasks may also be JSON lines (one object a line).
 * @throws InvalidArgumentError naming the file when it cannot be read or parsed
 */
export function readJsonFile(file: string, allowLines = false): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw new InvalidArgumentError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const parsed = parseJsonText(file, text, allowLines);
  // `1e400` parses as Infinity, which JSON would send as null.
  const odd = nonFiniteNumber(parsed);
  if (odd) throw new InvalidArgumentError(nonFiniteNumberMessage(`${file}: `, { ...odd, path: odd.path.replace(/^\./, '') }));
  return parsed;
}

/**
 * The value of a file's text: one JSON document, or (with `allowLines`) JSON lines, one value a
 * line, blank lines skipped. A leading byte order mark is dropped (editors on Windows write one).
 * When the first line is a JSON value of its own, the file is taken for JSON lines and an error
 * names the line it is on (the whole-file parse would name a position after the first line);
 * otherwise the whole-file error stands (a pretty-printed document).
 * @throws InvalidArgumentError naming the file (and the line)
 */
function parseJsonText(file: string, raw: string, allowLines: boolean): unknown {
  const text = raw.startsWith('\uFEFF') ? raw.slice(1) : raw;
  try {
    return JSON.parse(text);
  } catch (err) {
    const lines = allowLines
      ? text
          .split('\n')
          .map((l, i) => ({ text: l, number: i + 1 }))
          .filter((l) => l.text.trim() !== '')
      : [];
    const values: unknown[] = [];
    for (const l of lines.length > 1 ? lines : []) {
      try {
        values.push(JSON.parse(l.text));
      } catch (lineErr) {
        if (values.length === 0) break; // not JSON lines: the whole-file error below
        throw new InvalidArgumentError(`${file} line ${l.number} is not valid JSON: ${(lineErr as Error).message}`);
      }
    }
    if (values.length === lines.length && values.length > 1) return values;
    throw new InvalidArgumentError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
}

/** Splits `items` into chunks of at most `size`. */
export function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** An outcome that is not an error but not a success either (`wait` timed out, `ready` not ready): the CLI exits `exitCode`, its output already printed. */
export class CliExit extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'CliExit';
  }
}
