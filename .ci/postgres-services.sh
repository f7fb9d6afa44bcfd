# shellcheck shell=bash
# .ci/postgres-services.sh -- the single-node service tests once more, on the PostgreSQL store.
#
# Meant to be SOURCED by .ci/run after the Node 20 `npm test` run (the machine's Node only), with
# POSTGRES_URL set by .ci/services.sh:
#
#     source .ci/postgres-services.sh
#     ci_postgres_services_suite 900 || status=1   # sets CI_PG_PASSED / _FAILED / _PENDING
#
# It runs the files of CI_PG_SERVICE_FILES with TEST_SERVICE_STORE=postgres: every service the
# test helpers start (test/helpers/service-process.ts, in-process-scheduler.ts) runs on a schema of
# its own on that server instead of its SQLite file (test/helpers/service-store.ts). Left out:
#   * store-faults, store-full-wal, store-lock, backup-restore: about the SQLite file (they skip
#     themselves under the switch);
#   * cluster-*, mongo-smoke and the cluster chaos files: they choose their store themselves;
#   * dashboard, dashboard-views: the pages in Chromium; not yet run on PostgreSQL (no Chromium
#     where this list was made: they were skipped there);
#   * of the single-node chaos files, workflow-sigkill (44 s on PostgreSQL) and sigkill-under-load
#     (195 s): with them the run would take about 10 min; they pass on PostgreSQL (2026-12-06),
#     run them by hand with TEST_SERVICE_STORE=postgres. graceful-shutdown (55 s) and
#     checkpoint-sigkill (6 s) are in: each found a PostgreSQL-only fault (CHANGELOG, Fixed).
# The list took 402 s on 2026-12-06 (2 cores shared with other jobs; 350 s without the two chaos files).
# A run that reports no results counts as one failed check. Nothing here changes shell options.

CI_PG_SERVICE_FILES=(
  integration/actor-client integration/cancel-at-start integration/cli integration/cli-coverage
  integration/concurrency-keys integration/cron-overlap integration/cron-restart integration/durability
  integration/external-queues integration/external-trace integration/failure-detail integration/fencing
  integration/field-cases integration/finished-gauge integration/handler-children integration/handler-rejection
  integration/https integration/leases integration/overflow-release integration/pull-lease integration/pull-lease-restart
  integration/pull-worker-app integration/redis-smoke integration/service-e2e integration/service-stall
  integration/task-trace integration/tenants-dispatch integration/timeouts integration/tracing
  integration/user-handlers integration/wait-scheduler integration/worker-chaos integration/worker-liveness
  integration/worker-spread integration/workflow-actor-client integration/workflows integration/fd-limit
  integration/deep-results
  chaos/graceful-shutdown chaos/checkpoint-sigkill
)

# Runs CI_PG_SERVICE_FILES on PostgreSQL within TIMEOUT_S seconds; sets CI_PG_PASSED, CI_PG_FAILED
# and CI_PG_PENDING from mocha's counts (test/support/results-reporter.ts) and returns mocha's status.
ci_postgres_services_suite() {
  local timeout_s="$1" results status f files=()
  CI_PG_PASSED=0 CI_PG_FAILED=1 CI_PG_PENDING=0
  if [ -z "${POSTGRES_URL:-}" ]; then
    printf '[ci-pg] ERROR: POSTGRES_URL is not set\n' >&2
    return 1
  fi
  for f in "${CI_PG_SERVICE_FILES[@]}"; do files+=("dist/test/$f.test.js"); done
  results="$(mktemp)" && rm -f "$results"
  printf '[ci-pg] the single-node service tests on PostgreSQL (timeout %s s)\n' "$timeout_s" >&2
  # --no-config: .mocharc's spec (every file) would be added to these; its other options follow.
  TEST_SERVICE_STORE=postgres MOCHA_RESULTS_FILE="$results" timeout --kill-after=30 "$timeout_s" \
    npx mocha --no-config --reporter dist/test/support/results-reporter.js --node-option enable-source-maps \
    --timeout 60000 "${files[@]}"
  status=$?
  if [ ! -s "$results" ]; then
    printf '[ci-pg] ERROR: mocha did not report results (exit %s)\n' "$status" >&2
    return 1
  fi
  read -r CI_PG_PASSED CI_PG_FAILED CI_PG_PENDING < <(ci_read_results "$results")
  ci_summarize_results "$results" "node $(node --version) on PostgreSQL"
  rm -f "$results"
  printf '[ci-pg] %s passed, %s failed, %s skipped (exit %s)\n' "$CI_PG_PASSED" "$CI_PG_FAILED" "$CI_PG_PENDING" "$status" >&2
  if [ "$CI_PG_PASSED" -eq 0 ] && [ "$status" -eq 0 ]; then status=1; fi
  return "$status"
}
