/**
 * Scenario d, workflow: a DAG of `--dag-layers` × `--dag-width` `noop` tasks (default 100 × 100 =
 * 10,000), each task after the first layer depending on `--dag-fan-in` (2) tasks of the layer
 * before, submitted in one POST /api/v1/workflows, timed from the submission to the last task
 * terminal. To isolate what the dependencies cost, the same number of `noop` tasks is first run as
 * a workflow without edges (every task a root): per-edge overhead = (DAG time − flat time) ÷ edges.
 * Also: the acknowledgement time of each submission (validation and the one atomic insert), the
 * server's own created_at → completed_at, and release-to-start (a task's start − the completion of
 * its last upstream) over every task with dependencies.
 */
import { performance } from 'node:perf_hooks';
import type { Options } from '../cli-options';
import { waitForCompletions } from '../completion-wait';
import type { HttpClient } from '../http-client';
import { scrape } from '../metrics';
import type { TreeSampler } from '../proc-sampler';
import type { Service } from '../service-process';
import { distribution, round } from '../stats';

interface WorkflowTask {
  /** The workflow-local id. */
  task_id: string;
  task_type: 'noop';
  dependencies?: string[];
}

/** Layers of `width` tasks; task i of layer l depends on tasks i, i+1, … (mod width) of layer l−1. */
export function layeredDag(layers: number, width: number, fanIn: number): { tasks: WorkflowTask[]; edges: number } {
  const tasks: WorkflowTask[] = [];
  let edges = 0;
  for (let l = 0; l < layers; l++) {
    for (let i = 0; i < width; i++) {
      const deps = l === 0 ? [] : [...new Set(Array.from({ length: Math.min(fanIn, width) }, (_, k) => `${l - 1}.${(i + k) % width}`))];
      edges += deps.length;
      tasks.push({ task_id: `${l}.${i}`, task_type: 'noop', ...(deps.length > 0 ? { dependencies: deps } : {}) });
    }
  }
  return { tasks, edges };
}

/** Submits one workflow and waits until all its tasks are terminal (read from /metrics). */
async function runWorkflow(client: HttpClient, opts: Options, name: string, tasks: WorkflowTask[]) {
  const baseline = await scrape(client);
  const body = JSON.stringify({ workflow_name: name, tasks });
  const origin = performance.now();
  const res = await client.request('POST', '/api/v1/workflows', body, 120_000);
  const ackMs = performance.now() - origin;
  if (res.status !== 202) throw new Error(`workflow: POST /api/v1/workflows: HTTP ${res.status} ${res.body.slice(0, 300)}`);
  const workflowId = (JSON.parse(res.body) as { workflow_id: string }).workflow_id;
  const wait = await waitForCompletions(client, baseline, tasks.length, opts.pollMs, origin, 60_000);
  const endToEndMs = wait.done_at - origin;
  const view = await client.request('GET', `/api/v1/workflows/${workflowId}`, undefined, 120_000);
  const wf = JSON.parse(view.body) as {
    status: string;
    created_at: string;
    completed_at: string | null;
    task_counts: Record<string, number>;
    task_details: Array<{ workflow_task_id: string; dependencies: string[]; started_at: string | null; completed_at: string | null }>;
  };
  return { workflowId, ackMs, endToEndMs, wait, wf, bodyBytes: Buffer.byteLength(body) };
}

export async function workflowScenario(client: HttpClient, svc: Service, opts: Options): Promise<Record<string, unknown>> {
  const { dagLayers: layers, dagWidth: width, dagFanIn: fanIn } = opts;
  const dag = layeredDag(layers, width, fanIn);
  const sampler = svc.sampler as TreeSampler;

  const flat = await runWorkflow(
    client,
    opts,
    'bench-flat',
    dag.tasks.map((t) => ({ task_id: t.task_id, task_type: t.task_type })),
  );
  sampler.beginPhase();
  const run = await runWorkflow(client, opts, 'bench-dag', dag.tasks);
  const resources = sampler.endPhase();

  const byId = new Map(run.wf.task_details.map((t) => [t.workflow_task_id, t]));
  const releaseToStart: number[] = [];
  for (const t of run.wf.task_details) {
    if (t.dependencies.length === 0 || !t.started_at) continue;
    const lastUpstream = Math.max(...t.dependencies.map((d) => Date.parse(byId.get(d)?.completed_at ?? '')));
    releaseToStart.push(Date.parse(t.started_at) - lastUpstream);
  }
  const serverMs = run.wf.completed_at ? Date.parse(run.wf.completed_at) - Date.parse(run.wf.created_at) : null;
  return {
    tasks: dag.tasks.length,
    layers,
    width,
    fan_in: fanIn,
    edges: dag.edges,
    body_bytes: run.bodyBytes,
    status: run.wf.status,
    task_counts: run.wf.task_counts,
    submit_ack_ms: round(run.ackMs, 0),
    end_to_end_s: round(run.endToEndMs / 1000, 2),
    server_created_to_completed_s: serverMs === null ? null : round(serverMs / 1000, 2),
    tasks_per_s: round(dag.tasks.length / (run.endToEndMs / 1000), 0),
    per_layer_ms: round(run.endToEndMs / layers, 1),
    flat_baseline: {
      what: 'the same tasks as one workflow without edges',
      submit_ack_ms: round(flat.ackMs, 0),
      end_to_end_s: round(flat.endToEndMs / 1000, 2),
      status: flat.wf.status,
    },
    per_edge_overhead_ms: round((run.endToEndMs - flat.endToEndMs) / dag.edges, 3),
    per_edge_submit_overhead_ms: round((run.ackMs - flat.ackMs) / dag.edges, 4),
    release_to_start: distribution(releaseToStart),
    terminal_counts: run.wait.counts,
    resources,
  };
}
