# shellcheck shell=bash
# .ci/node-versions.sh -- run the test suite on Node.js majors other than the machine's own.
#
# Meant to be SOURCED by .ci/run (or by hand, from a checkout whose node_modules is its own, after
# `npm ci`):
#
#     source .ci/node-versions.sh
#     CI_NODE_MOCHA_ARGS=(--ignore 'dist/test/chaos/**')   # optional: more mocha arguments
#     ci_node_suite 22.23.3 2400 || status=1     # sets CI_NODE_PASSED / _FAILED / _PENDING
#     ci_node_restore_binding                    # back to the machine's Node (also on EXIT)
#
# For each version it:
#   * installs Node from the npm registry: the package node-<platform>-<arch>@VERSION (what the
#     `node@VERSION` package installs) holds bin/node and the headers in include/node; cached in
#     ${XDG_CACHE_HOME:-$HOME/.cache}/scheduler-ci/node/;
#   * on Node 22 and later, checks that better-sqlite3 13 loads (the alias `better-sqlite3-napi`,
#     what the store uses there, src/storage/sqlite/driver.ts: a Node-API addon, prebuilt in its
#     package for every Node from 22 on, nothing to compile);
#   * on another Node 20, compiles better-sqlite3 12 (a native addon: one ABI per Node major; its
#     prebuilt binaries come from a host CI cannot reach) against those headers with npm's own
#     node-gyp (npm_config_nodedir: nothing is downloaded), once per Node and better-sqlite3
#     version, cached beside it, and puts that addon in node_modules/better-sqlite3/build/Release/
#     (the machine's own is kept and put back by ci_node_restore_binding);
#   * runs `npm test` with that Node first on PATH, so the service and worker processes the tests
#     spawn (process.execPath) run on it too.
# A version that cannot be installed or compiled counts as one failed check: it fails the run, it
# is never skipped. Nothing here changes the caller's shell options.

CI_NODE_CACHE="${CI_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scheduler-ci/node}"
CI_NODE_BINDING_DIR="node_modules/better-sqlite3/build/Release"
CI_NODE_SAVED_BINDING=""

_ci_node_log() { printf '[ci-node] %s\n' "$*" >&2; }
_ci_node_fail() { printf '[ci-node] ERROR: %s\n' "$*" >&2; return 1; }

# Prints "PASSED FAILED PENDING" from a results file of test/support/results-reporter.ts.
ci_read_results() {
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(r.passes, r.failures, r.pending);' "$1"
}

# Appends to CI_SUMMARY_FILE (when set) what a reader of the log's end needs from a results file:
# each failed test (file, full title, first line of its error) and the run's slowest test files.
# LABEL names the run ("Node 22.23.3").
ci_summarize_results() {
  [ -n "${CI_SUMMARY_FILE:-}" ] || return 0
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const label = process.argv[2];
    for (const f of r.failed ?? []) console.log(`${label}: FAILED ${f.file}: ${f.title}\n    ${f.error}`);
    const slow = Object.entries(r.files ?? {}).sort((a, b) => b[1] - a[1]).slice(0, 8);
    const total = Object.values(r.files ?? {}).reduce((a, b) => a + b, 0);
    console.log(`${label}: ${Math.round(total / 1000)} s in test files; slowest: ` +
      slow.map(([f, ms]) => `${f} ${Math.round(ms / 1000)} s`).join(", "));' "$1" "$2" >>"$CI_SUMMARY_FILE" 2>&1 || true
}

# Prints the home (bin/node, include/node) of Node VERSION, installing it if not cached.
ci_node_install() {
  local version="$1" platform pkg home tmp
  platform="$(node -p 'process.platform + "-" + process.arch')" || return 1
  pkg="node-${platform}@${version}"
  home="$CI_NODE_CACHE/node-${version}-${platform}"
  if [ -x "$home/bin/node" ] && [ -f "$home/include/node/node.h" ]; then
    _ci_node_log "Node $version: using cached $home"
  else
    _ci_node_log "Node $version: installing $pkg from the npm registry"
    mkdir -p "$CI_NODE_CACHE" || { _ci_node_fail "cannot create $CI_NODE_CACHE"; return 1; }
    tmp="$(mktemp -d "$CI_NODE_CACHE/.install-XXXXXX")" || return 1
    # npm pack: the registry's tarball as it is (no install scripts, no node_modules).
    if ! (cd "$tmp" && npm pack --silent "$pkg" >pack.out 2>pack.err && tar xzf ./*.tgz); then
      cat "$tmp/pack.err" >&2 2>/dev/null
      rm -rf "$tmp"
      _ci_node_fail "Node $version: npm pack $pkg failed"
      return 1
    fi
    rm -rf "$home"
    # The rename makes the cache entry appear whole or not at all.
    mv "$tmp/package" "$home" && rm -rf "$tmp" || { rm -rf "$tmp"; _ci_node_fail "Node $version: cannot place $home"; return 1; }
  fi
  if [ "$("$home/bin/node" --version 2>/dev/null)" != "v$version" ]; then
    _ci_node_fail "Node $version: $home/bin/node does not run as v$version"
    return 1
  fi
  if [ ! -f "$home/include/node/node.h" ]; then
    _ci_node_fail "Node $version: $pkg has no include/node headers to compile better-sqlite3 against"
    return 1
  fi
  printf '%s\n' "$home"
}

# Prints the path of better-sqlite3's addon compiled for the Node in HOME (VERSION), compiling it
# from node_modules/better-sqlite3's sources if not cached.
ci_node_sqlite_binding() {
  local version="$1" home="$2" bsv out tmp t0
  bsv="$(node -p 'require("./node_modules/better-sqlite3/package.json").version')" || return 1
  out="$CI_NODE_CACHE/better_sqlite3-${bsv}-node-${version}-$(node -p 'process.platform + "-" + process.arch').node"
  if [ -s "$out" ]; then
    _ci_node_log "Node $version: using cached better-sqlite3 $bsv addon $out"
    printf '%s\n' "$out"
    return 0
  fi
  # Node 24.19 made node::ObjectWrap's destructor remove an environment cleanup hook, which aborts
  # (CHECK env != nullptr) when V8 finalizes an object outside a JS context; better-sqlite3 before
  # 13 derives its Statement from node::ObjectWrap, so an addon compiled against those headers
  # aborts the process at a garbage collection (seen here on 24.21.0, in the unit tests).
  if [ "${bsv%%.*}" -lt 13 ] && grep -q RemoveEnvironmentCleanupHook "$home/include/node/node_object_wrap.h" 2>/dev/null; then
    _ci_node_fail "Node $version: better-sqlite3 $bsv compiled against these headers aborts at garbage collection (node::ObjectWrap cleanup hooks, Node >= 24.19): use a Node 24 up to 24.18 or better-sqlite3 >= 13"
    return 1
  fi
  _ci_node_log "Node $version: compiling better-sqlite3 $bsv against $home/include/node (a few minutes)"
  t0=$SECONDS
  tmp="$(mktemp -d "$CI_NODE_CACHE/.build-XXXXXX")" || return 1
  cp -a node_modules/better-sqlite3/. "$tmp/" && rm -rf "$tmp/build" || { rm -rf "$tmp"; return 1; }
  # `npm run` puts npm's bundled node-gyp on PATH; npm_config_nodedir points it at the headers.
  if ! (cd "$tmp" && PATH="$home/bin:$PATH" npm_config_nodedir="$home" npm run build-release >build.log 2>&1); then
    tail -30 "$tmp/build.log" >&2
    rm -rf "$tmp"
    _ci_node_fail "Node $version: compiling better-sqlite3 failed"
    return 1
  fi
  mv "$tmp/build/Release/better_sqlite3.node" "$out.tmp" && mv "$out.tmp" "$out"
  rm -rf "$tmp"
  _ci_node_log "Node $version: better-sqlite3 compiled in $((SECONDS - t0)) s"
  printf '%s\n' "$out"
}

# Puts FILE in place as better-sqlite3's addon (a rename: a process that has the old one loaded
# keeps it). The first call keeps the machine's own addon for ci_node_restore_binding.
ci_node_use_binding() {
  local file="$1" target="$CI_NODE_BINDING_DIR/better_sqlite3.node"
  if [ -L node_modules ]; then
    _ci_node_fail "node_modules is a symlink (shared with other checkouts): refusing to swap its addon"
    return 1
  fi
  if [ -z "$CI_NODE_SAVED_BINDING" ]; then
    CI_NODE_SAVED_BINDING="$(mktemp "${TMPDIR:-/tmp}/better_sqlite3-own-XXXXXX.node")" || return 1
    cp -p "$target" "$CI_NODE_SAVED_BINDING" || return 1
  fi
  cp "$file" "$target.swap" && mv "$target.swap" "$target"
}

# Puts the machine's own better-sqlite3 addon back (a no-op if none was swapped).
ci_node_restore_binding() {
  [ -n "$CI_NODE_SAVED_BINDING" ] || return 0
  local target="$CI_NODE_BINDING_DIR/better_sqlite3.node"
  cp "$CI_NODE_SAVED_BINDING" "$target.swap" && mv "$target.swap" "$target" && rm -f "$CI_NODE_SAVED_BINDING" \
    && CI_NODE_SAVED_BINDING="" && _ci_node_log "better-sqlite3: the addon for $(node --version) is back"
}

# Prints the package the store loads better-sqlite3 from on Node VERSION (src/storage/sqlite/driver.ts):
# better-sqlite3-napi (13) from Node 22 on, better-sqlite3 (12) before.
ci_node_sqlite_driver() {
  if [ "${1%%.*}" -ge 22 ]; then echo better-sqlite3-napi; else echo better-sqlite3; fi
}

# Runs `npm test` on Node VERSION within TIMEOUT seconds and sets CI_NODE_PASSED, CI_NODE_FAILED
# and CI_NODE_PENDING. Returns non-zero when the version could not be set up (counted as one
# failed check), its suite failed, or it reported nothing. Leaves the version's addon in place:
# call ci_node_restore_binding after the last version.
ci_node_suite() {
  local version="$1" timeout_s="$2" home driver binding results status
  CI_NODE_PASSED=0 CI_NODE_FAILED=1 CI_NODE_PENDING=0
  home="$(ci_node_install "$version")" || return 1
  driver="$(ci_node_sqlite_driver "$version")"
  if [ "$driver" = better-sqlite3 ]; then
    binding="$(ci_node_sqlite_binding "$version" "$home")" || return 1
    ci_node_use_binding "$binding" || { _ci_node_fail "Node $version: cannot put its better-sqlite3 addon in place"; return 1; }
  fi
  if ! PATH="$home/bin:$PATH" node -e 'new (require(process.argv[1]))(":memory:").close()' "$driver"; then
    _ci_node_fail "Node $version: $driver does not load"
    return 1
  fi
  _ci_node_log "Node $version: npm test (timeout ${timeout_s} s)"
  results="$(mktemp)" && rm -f "$results"
  # CI_NODE_MOCHA_ARGS (an array, may be unset): more arguments for mocha on these versions.
  PATH="$home/bin:$PATH" MOCHA_RESULTS_FILE="$results" timeout --kill-after=30 "$timeout_s" \
    npm test -- ${CI_NODE_MOCHA_ARGS[@]+"${CI_NODE_MOCHA_ARGS[@]}"}
  status=$?
  if [ ! -s "$results" ]; then
    _ci_node_fail "Node $version: mocha did not report results (exit $status)"
    return 1
  fi
  read -r CI_NODE_PASSED CI_NODE_FAILED CI_NODE_PENDING < <(ci_read_results "$results")
  ci_summarize_results "$results" "Node $version"
  rm -f "$results"
  _ci_node_log "Node $version: ${CI_NODE_PASSED} passed, ${CI_NODE_FAILED} failed, ${CI_NODE_PENDING} skipped (exit $status)"
  if [ "$CI_NODE_PASSED" -eq 0 ] && [ "$status" -eq 0 ]; then status=1; fi
  return "$status"
}
