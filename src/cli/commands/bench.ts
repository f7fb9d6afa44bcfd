import { Command } from 'commander';
import { batchSizeValue, CliEnv, contextOf, positiveInt } from '../context';
import { print } from '../output';
import { submitInBatches } from './tasks';

/** `bench`: submits N tasks (default `noop`) in batches and prints the submission rate. */
export function benchCommand(program: Command, cli: CliEnv): void {
  program
    .command('bench')
    .description('submit N tasks (noop, or --type) in batches and print the rate (see load-tests/ for end-to-end figures)')
    .option('-n, --count <n>', 'tasks to submit', positiveInt, 10_000)
    .option('--batch-size <n>', 'tasks per batch request (1..1000)', batchSizeValue, 500)
    .option('--type <task_type>', 'task type to submit', 'noop')
    .action(async (f: { count: number; batchSize: number; type: string }, cmd: Command) => {
      const { client, io } = contextOf(cmd, cli);
      const tasks = Array.from({ length: f.count }, () => ({ task_type: f.type }));
      const { acks, seconds } = await submitInBatches(client, io, tasks, f.batchSize);
      const rate = acks.length / Math.max(seconds, 1e-6);
      print(
        io,
        { submitted: acks.length, batch_size: f.batchSize, seconds, tasks_per_second: Math.round(rate) },
        () =>
          `submitted ${acks.length} ${f.type} tasks in batches of ${f.batchSize}: ${seconds.toFixed(2)} s, ${Math.round(rate)} tasks/s\n`,
      );
    });
}
