/**
 * Network namespaces of a test's own (Linux, root, iproute2): "hosts" whose only links are veth
 * pairs to the root namespace, addressed in 127.0.0.0/8 only, so no packet of theirs is addressed
 * to anything outside this machine (there is no route from a namespace to anywhere else).
 *
 * Each host has two links, each a /30 of its own in 127.<net>.0.0/16 (`net` chosen per run among
 * the free ones): a control link (the test's HTTP to the host's service) and a data link (the
 * host's connections to PostgreSQL, which listens on the data link's root-side address). Cutting
 * the data link (`ip link set <root side> down`) cuts the host off from PostgreSQL while the test
 * still sees the host's own view (`/readyz`, `/metrics`) through the control link.
 *
 * 127.0.0.0/8 on a veth: Linux routes loopback-range addresses only on interfaces with
 * `route_localnet=1` (set on each veth end, never on the root namespace's `all`), and every
 * namespace with `lo` up has `local 127.0.0.0/8` in its local table, which would deliver the
 * peer's address to itself: a /30 route through the veth is added to the local table of each side
 * (longest prefix wins). Taking the root side down removes its routes; {@link NetnsHost.restore}
 * puts them back. Nothing global of the root namespace changes; removing the namespaces, veths and
 * a cut's blackhole route removes every route and setting made here. IPv6 is disabled on every
 * veth end (no fe80:: address).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** One point-to-point link of a host: its veth names and the /30's two addresses. */
export interface NetnsLink {
  /** Root-namespace end of the veth pair. */
  rootDev: string;
  /** The host's end, inside its namespace. */
  hostDev: string;
  /** Address of the root end (`127.<net>.<n>.1`). */
  rootAddress: string;
  /** Address of the host end (`127.<net>.<n>.2`). */
  hostAddress: string;
  /** The /30 (`127.<net>.<n>.0/30`). */
  subnet: string;
}

/** A namespace with its control and data links. */
export interface NetnsHost {
  /** The namespace's name (`ip netns exec <name> …`). */
  name: string;
  /** The test's HTTP to the host: services there listen on `control.hostAddress`. */
  control: NetnsLink;
  /** The host's PostgreSQL traffic: it connects to `data.rootAddress`. */
  data: NetnsLink;
  /** The command prefix that runs a program inside the namespace: `['ip', 'netns', 'exec', name]`. */
  prefix: string[];
  /**
   * Cuts the data link: its root end goes down and the root side's packets to the host are
   * blackholed (dropped either way, nothing answered: no reset, no unreachable).
   */
  cut(): void;
  /** Brings the data link back up with its routes (the blackhole removed). */
  restore(): void;
}

/** The hosts of one test run. */
export interface NetnsLab {
  hosts: NetnsHost[];
  /** Second octet of every address of this run (`127.<net>.x.y`). */
  net: number;
  /** Removes the namespaces, the root ends of their veths and a cut's blackhole route (errors ignored: clean-up). */
  remove(): void;
}

/** Runs `ip` (or another program) and returns its stdout. @throws Error with its stderr when it fails */
function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 15_000 });
}

function tryRun(cmd: string, args: string[]): void {
  try {
    run(cmd, args);
  } catch {
    /* clean-up: already gone */
  }
}

/**
 * Why this machine cannot run namespace tests (not root, no `ip`, namespaces refused), or null.
 * Creates and removes a probe namespace.
 */
export function netnsUnavailable(): string | null {
  if (process.platform !== 'linux') return 'needs Linux network namespaces';
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'needs root (ip netns add)';
  const probe = `nsprobe-${process.pid}`;
  try {
    run('ip', ['netns', 'add', probe]);
  } catch (err) {
    return `ip netns add failed (no iproute2 or no CAP_SYS_ADMIN): ${String(err).split('\n')[0]}`;
  } finally {
    tryRun('ip', ['netns', 'del', probe]);
  }
  return null;
}

/** Second octets 127.<net>.*.* already routed in the root namespace (another run's hosts). */
function usedNets(): Set<number> {
  const used = new Set<number>();
  const table = run('ip', ['-4', 'route', 'show', 'table', 'local']);
  for (const m of table.matchAll(/\b127\.(\d+)\.\d+\.\d+/g)) used.add(Number(m[1]));
  return used;
}

/** Removes namespaces left by an earlier run of this helper whose process is gone (a killed test). */
function removeStale(tag: string): void {
  let names: string[] = [];
  try {
    names = run('ip', ['netns', 'list'])
      .split('\n')
      .map((l) => l.split(' ')[0]);
  } catch {
    return;
  }
  for (const name of names) {
    const m = new RegExp(`^${tag}-(\\d+)-\\d+$`).exec(name);
    if (m && !fs.existsSync(`/proc/${m[1]}`)) tryRun('ip', ['netns', 'del', name]);
  }
}

/** Adds `link.subnet` through `dev` to the local table (before the `local 127.0.0.0/8` route). */
function localRouteArgs(link: NetnsLink, side: 'root' | 'host'): string[] {
  const dev = side === 'root' ? link.rootDev : link.hostDev;
  const src = side === 'root' ? link.rootAddress : link.hostAddress;
  return ['route', 'replace', link.subnet, 'dev', dev, 'table', 'local', 'src', src];
}

/** Creates one veth pair, moves its host end into `ns`, addresses and routes both ends. */
function addLink(ns: string, link: NetnsLink): void {
  run('ip', ['link', 'add', link.rootDev, 'type', 'veth', 'peer', 'name', link.hostDev]);
  run('ip', ['link', 'set', link.hostDev, 'netns', ns]);
  const inNs = ['netns', 'exec', ns];
  if (fs.existsSync('/proc/sys/net/ipv6')) {
    // No IPv6 link-local address (fe80::/64) either: the links carry 127.0.0.0/8 and nothing else.
    run('sysctl', ['-q', '-w', `net.ipv6.conf.${link.rootDev}.disable_ipv6=1`]);
    run('ip', [...inNs, 'sysctl', '-q', '-w', `net.ipv6.conf.${link.hostDev}.disable_ipv6=1`]);
  }
  run('sysctl', ['-q', '-w', `net.ipv4.conf.${link.rootDev}.route_localnet=1`]);
  run('ip', ['addr', 'add', `${link.rootAddress}/30`, 'dev', link.rootDev]);
  run('ip', ['link', 'set', link.rootDev, 'up']);
  run('ip', localRouteArgs(link, 'root'));
  run('ip', [...inNs, 'sysctl', '-q', '-w', `net.ipv4.conf.${link.hostDev}.route_localnet=1`]);
  run('ip', [...inNs, 'ip', 'addr', 'add', `${link.hostAddress}/30`, 'dev', link.hostDev]);
  run('ip', [...inNs, 'ip', 'link', 'set', link.hostDev, 'up']);
  run('ip', [...inNs, 'ip', ...localRouteArgs(link, 'host')]);
}

/**
 * Creates `count` hosts (namespaces `<tag>-<pid>-<i>`, each with a control and a data link); the
 * ones of a dead earlier run of the same tag are removed first. On failure, what was made is removed.
 * @throws Error with `ip`'s message when a namespace, veth, address or route cannot be made, or
 *   when no 127.<net>.0.0/16 is free
 */
export function createNetnsLab(count: number, tag = 'schedns'): NetnsLab {
  removeStale(tag);
  const used = usedNets();
  const candidates = Array.from({ length: 150 }, (_, k) => 100 + ((process.pid + k) % 150)).filter((n) => !used.has(n));
  if (candidates.length === 0) throw new Error('no free 127.<net>.0.0/16 for the test namespaces');
  const net = candidates[0];
  const hosts: NetnsHost[] = [];
  const short = process.pid.toString(36);
  const lab: NetnsLab = {
    hosts,
    net,
    remove() {
      for (const h of hosts) {
        tryRun('ip', ['netns', 'del', h.name]); // deletes the host ends, and so both ends of each pair
        tryRun('ip', ['link', 'del', h.control.rootDev]);
        tryRun('ip', ['link', 'del', h.data.rootDev]);
        tryRun('ip', ['route', 'del', 'blackhole', h.data.subnet, 'table', 'local']); // a cut not restored
      }
    },
  };
  const link = (i: number, kind: 'c' | 'd', third: number): NetnsLink => ({
    rootDev: `vr${short}${kind}${i}`,
    hostDev: `vh${short}${kind}${i}`,
    rootAddress: `127.${net}.${third}.1`,
    hostAddress: `127.${net}.${third}.2`,
    subnet: `127.${net}.${third}.0/30`,
  });
  try {
    for (let i = 0; i < count; i++) {
      const name = `${tag}-${process.pid}-${i}`;
      const control = link(i, 'c', 2 * i);
      const data = link(i, 'd', 2 * i + 1);
      const host: NetnsHost = {
        name,
        control,
        data,
        prefix: ['ip', 'netns', 'exec', name],
        cut: () => {
          run('ip', ['link', 'set', data.rootDev, 'down']);
          // Without its routes the root side would take the host's address for its own (local
          // 127.0.0.0/8) and answer PostgreSQL's packets with resets: drop them instead.
          run('ip', ['route', 'replace', 'blackhole', data.subnet, 'table', 'local']);
        },
        restore: () => {
          tryRun('ip', ['route', 'del', 'blackhole', data.subnet, 'table', 'local']); // `replace` leaves it beside the new route
          run('ip', ['link', 'set', data.rootDev, 'up']);
          run('ip', localRouteArgs(data, 'root'));
          run('ip', ['netns', 'exec', name, 'ip', ...localRouteArgs(data, 'host')]);
        },
      };
      hosts.push(host);
      run('ip', ['netns', 'add', name]);
      run('ip', ['netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up']);
      addLink(name, control);
      addLink(name, data);
    }
  } catch (err) {
    lab.remove();
    throw err;
  }
  return lab;
}
