import pino from 'pino';

/**
 * Logger implementation handed to comedy (`createSystem({logger})`, also loaded by forked
 * children through its module path): comedy's warnings and errors go to the service's JSON log on
 * stderr; its info/debug chatter is dropped.
 */
class ComedyLogger {
  private readonly log: pino.Logger;

  /** @param params.level pino level (the service's LOG_LEVEL; forked children: env or `warn`) */
  constructor(params?: { level?: string }) {
    this.log = pino({ name: 'comedy', level: params?.level ?? process.env.LOG_LEVEL ?? 'warn' }, pino.destination(2));
  }

  error(...args: unknown[]): void {
    this.log.error(args.map(String).join(' '));
  }

  warn(...args: unknown[]): void {
    this.log.warn(args.map(String).join(' '));
  }

  info(): void {}

  debug(): void {}
}

export = ComedyLogger;
