#!/usr/bin/env bash
# README.md, "A first task": submit an echo task to a running service and read it back.
# The lines between the markers are the README's quick-start block, word for word;
# test/docs/readme-quickstart.test.ts checks that and runs this script against a real service.
set -euo pipefail

# quickstart:start
SCHEDULER_URL=${SCHEDULER_URL:-http://127.0.0.1:8080}
TASK_ID=$(curl -sf -X POST "$SCHEDULER_URL/api/v1/tasks" -H 'content-type: application/json' \
  -d '{"task_type": "echo", "payload": {"hello": "world"}}' | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).task_id')
curl -sf "$SCHEDULER_URL/api/v1/tasks/$TASK_ID"
# quickstart:end
