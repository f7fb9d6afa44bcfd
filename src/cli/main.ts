import { runCli } from './program';

/** Entry point of `bin/scheduler`: runs the CLI on the process's arguments and exits with its code. */
runCli(process.argv.slice(2), { env: process.env, out: process.stdout, err: process.stderr }).then((code) => {
  process.exitCode = code;
});
