/**
 * A reason the service cannot start that the operator must fix (configuration, a store created
 * with other settings or in use, a handler module that does not load): `main` prints its message
 * as one line and exits with {@link StartupError.exitCode}, 78 (EX_CONFIG in BSD's sysexits.h),
 * so a supervisor does not restart it in a loop. Any other error at start-up is a bug: exit 1 with
 * its stack.
 */
export class StartupError extends Error {
  /** The process exit code (78: EX_CONFIG, "something was found in an unconfigured or misconfigured state"). */
  readonly exitCode: number = 78;

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}
