import { Command, InvalidArgumentError } from 'commander';
import { ConfigError, loadConfig } from '../../config';
import { backupSqlite, BackupError } from '../../storage/sqlite/backup';
import { CliEnv } from '../context';
import { print } from '../output';

/**
 * `backup --to FILE`: an online copy of the embedded store (SQLite's backup API), taken from the
 * file itself, not through the REST API: run it on the host of the service, while it runs or not.
 * The store is the configured one (the service's config files and `SQLITE_PATH`, read as the
 * service reads them) unless `--sqlite-path` names it. A MongoDB store is backed up with
 * `mongodump` (docs/OPERATIONS.md "Backup and restore"). Errors (no store, the destination exists)
 * exit 2 with one line.
 */
export function backupCommand(program: Command, cli: CliEnv): void {
  program
    .command('backup')
    .description('copy the SQLite store of a running (or stopped) service to FILE (on its host; MongoDB: use mongodump)')
    .requiredOption('--to <file>', 'the backup file to write (refused if it exists, unless --force)')
    .option('--sqlite-path <path>', 'the store to copy (default: the configured SQLITE_PATH)')
    .option('--force', 'replace the backup file if it exists')
    .action(async (f: { to: string; sqlitePath?: string; force?: boolean }, cmd: Command) => {
      const globals = cmd.optsWithGlobals() as { json?: boolean; url?: string };
      const json = globals.json ?? false;
      // The copy is of a file on this host: a --url naming a service elsewhere would be silently ignored.
      if (globals.url !== undefined)
        throw new InvalidArgumentError(
          'backup: --url does not apply: backup copies the SQLite file of a service on this host (its configuration, or --sqlite-path); run it there',
        );
      // An empty path would resolve to the working directory.
      if (f.to.trim() === '') throw new InvalidArgumentError('backup: --to needs a file path, not an empty one');
      if (f.sqlitePath?.trim() === '') throw new InvalidArgumentError('backup: --sqlite-path needs a file path, not an empty one');
      const source = f.sqlitePath ?? configuredStore(cli);
      let result;
      try {
        result = await backupSqlite(source, f.to, { overwrite: f.force === true });
      } catch (err) {
        if (err instanceof BackupError) throw new InvalidArgumentError(err.message);
        throw err;
      }
      print(
        { out: cli.out, err: cli.err, json },
        result,
        () => `backed up ${result.source} to ${result.destination}: ${result.bytes} bytes\n`,
      );
    });
}

/** The SQLite file the service's configuration names. @throws InvalidArgumentError for a PostgreSQL or MongoDB store, or an invalid configuration */
function configuredStore(cli: CliEnv): string {
  let config;
  try {
    config = loadConfig({ env: cli.env });
  } catch (err) {
    if (err instanceof ConfigError) throw new InvalidArgumentError(err.message);
    throw err;
  }
  if (config.store === 'postgres') {
    throw new InvalidArgumentError(
      'backup: the store is PostgreSQL (SCHEDULER_STORE=postgres): back it up with pg_dump (docs/OPERATIONS.md "Backup and restore")',
    );
  }
  if (config.store !== 'sqlite') {
    throw new InvalidArgumentError(
      'backup: the store is MongoDB (SCHEDULER_STORE=mongodb): back it up with mongodump (docs/OPERATIONS.md "Backup and restore")',
    );
  }
  if (config.sqlitePath === ':memory:')
    throw new InvalidArgumentError('backup: the store is in memory (SQLITE_PATH=:memory:): nothing to copy');
  return config.sqlitePath;
}
