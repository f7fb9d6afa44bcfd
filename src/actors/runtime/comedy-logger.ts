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

  /**
   * comedy's warnings, but for the one every stop that had to kill a worker gives: comedy destroys
   * a forked child by a message on its IPC channel, which the kill closed (`ERR_IPC_CHANNEL_CLOSED`
   * while destroying a child). The service logged that kill itself (`killing worker process`), so
   * that line goes to debug.
   */
  warn(...args: unknown[]): void {
    const line = args.map(String).join(' ');
    if (line.includes('Error while destroying child actor') && line.includes('ERR_IPC_CHANNEL_CLOSED')) this.log.debug(line);
    else this.log.warn(line);
  }

  info(): void {}

  debug(): void {}
}

export = ComedyLogger;
