import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { ConnectionError, RequestBodyError, SchedulerApiError } from '../sdk/client';
import { CliEnv, CliExit } from './context';
import { PartialSubmitError, taskCommands } from './commands/tasks';
import { cronCommands } from './commands/cron';
import { workflowCommands } from './commands/workflow';
import { dlqCommands } from './commands/dlq';
import { benchCommand } from './commands/bench';
import { logsCommand } from './commands/logs';
import { backupCommand } from './commands/backup';
import { adminCommands } from './commands/admin';
import { WAIT_TIMEOUT_EXIT } from './commands/task-changes';
import { reportCommands } from './commands/reports';
import { healthCommands } from './commands/health';
import { packageVersion } from '../version';

/** Exit codes of the CLI (sysexits-like where one fits). */
export const EXIT = {
  ok: 0,
  /** The API answered with an error (4xx/5xx); its code and message are on stderr. */
  apiError: 1,
  /** Bad command line: unknown command or option, bad value, unreadable file. */
  usage: 2,
  /** The service could not be reached. */
  unavailable: 3,
  /** `wait`: the timeout passed before the task or workflow ended (its last state is printed). */
  waitTimeout: WAIT_TIMEOUT_EXIT,
} as const;

/** Builds the `scheduler` command tree (commander). */
export function buildProgram(cli: CliEnv): Command {
  const program = new Command('scheduler')
    .description('Command line for the task scheduler REST API')
    .version(packageVersion())
    .option('--url <url>', 'base URL of the service (env SCHEDULER_URL; default http://127.0.0.1:8080)')
    .option('--api-key <key>', 'API key sent as Authorization: Bearer (env SCHEDULER_API_KEY)')
    .option('--ca-file <file>', 'CA certificate(s), PEM, to trust for an https URL besides the system ones (env SCHEDULER_CA_FILE)')
    .option('--cert-file <file>', 'client certificate, PEM, for a service that requires one (env SCHEDULER_CERT_FILE)')
    .option('--key-file <file>', 'key of the client certificate, PEM (env SCHEDULER_KEY_FILE)')
    .option('--json', 'print JSON for scripts instead of tables')
    .exitOverride()
    .configureOutput({ writeOut: (s) => cli.out.write(s), writeErr: (s) => cli.err.write(s) });
  taskCommands(program, cli);
  logsCommand(program, cli);
  cronCommands(program, cli);
  workflowCommands(program, cli);
  dlqCommands(program, cli);
  adminCommands(program, cli);
  reportCommands(program, cli);
  healthCommands(program, cli);
  benchCommand(program, cli);
  backupCommand(program, cli);
  for (const c of allCommands(program))
    c.exitOverride().configureOutput({ writeOut: (s) => cli.out.write(s), writeErr: (s) => cli.err.write(s) });
  return program;
}

function allCommands(c: Command): Command[] {
  return c.commands.flatMap((sub) => [sub, ...allCommands(sub)]);
}

/**
 * Runs the CLI on `argv` (without node and script). @returns the exit code: 0, or {@link EXIT}'s
 * code for an API error (its code and message on stderr; as JSON with `--json`), a usage error or
 * an unreachable service (its message on stderr; with `--json` `{error: {code, message}}`, `code`
 * the socket's, e.g. `ECONNREFUSED`, or `UNREACHABLE`). Never throws.
 */
export async function runCli(argv: string[], cli: CliEnv): Promise<number> {
  const program = buildProgram(cli);
  const json = argv.includes('--json');
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (thrown) {
    let err = thrown;
    if (err instanceof PartialSubmitError) {
      // What was stored before the failing batch (--json: on stdout, as a success prints it); then its error.
      const { acks, total } = err;
      if (json) cli.out.write(`${JSON.stringify({ submitted: acks.length, total, tasks: acks })}\n`);
      else cli.err.write(`${err.message}\n`);
      err = err.cause;
    }
    // Thrown by an action (a parser's own is reported by commander and rethrown as CommanderError).
    if (err instanceof InvalidArgumentError) {
      cli.err.write(`error: ${err.message}\n`);
      return EXIT.usage;
    }
    // A body the client refused before sending (a JSON value nested too deep, a number JSON cannot hold).
    if (err instanceof RequestBodyError) {
      cli.err.write(json ? `${JSON.stringify({ error: { code: 'INVALID_BODY', message: err.message } })}\n` : `error: ${err.message}\n`);
      return EXIT.usage;
    }
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (err instanceof CliExit) return err.exitCode;
    if (err instanceof SchedulerApiError) {
      cli.err.write(
        json
          ? `${JSON.stringify({ error: { status: err.status, code: err.code, message: err.message, details: err.details } })}\n`
          : `error: ${err.code} (HTTP ${err.status}): ${err.message}\n`,
      );
      return EXIT.apiError;
    }
    if (err instanceof ConnectionError) {
      cli.err.write(
        json ? `${JSON.stringify({ error: { code: err.code ?? 'UNREACHABLE', message: err.message } })}\n` : `error: ${err.message}\n`,
      );
      return EXIT.unavailable;
    }
    // Anything else (an answer of an unexpected shape, a bug): one line; the stack with SCHEDULER_CLI_DEBUG=1.
    const message = err instanceof Error ? err.message : String(err);
    const stack = cli.env.SCHEDULER_CLI_DEBUG === '1' && err instanceof Error ? err.stack : undefined;
    cli.err.write(stack ? `error: ${stack}\n` : `error: ${message.split('\n')[0]} (SCHEDULER_CLI_DEBUG=1 shows where)\n`);
    return EXIT.apiError;
  }
}
