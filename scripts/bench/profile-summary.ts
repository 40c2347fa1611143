// Where a process's CPU time goes: self time of a `node --cpu-prof` profile by package and by
// function, and total time (self plus callees, each counted once per stack) by function.
//
//   node --conditions=source --import tsx scripts/bench/profile-summary.ts <file.cpuprofile>... [--top 25] [--focus <text>] [--min-ms 200]
//        [--window <file.json>]: only the samples between its `from` and `to` (µs of the monotonic clock
//        that profiles and `process.hrtime` share), e.g. the measured phase a bench wrote beside its profiles
//
// `--focus <text>`: only the samples whose stack holds a function whose name or file contains
// <text> (e.g. `writeCells`, `sanitize-html`): where that work's time goes.
// `--min-ms`: leaves out profiles busier than nothing much (a migration run, a stopped helper).
// `npm run bench:edge -- --profile <dir>` (and bench:cells, bench:runner) write one profile per
// service process into <dir>; each is named here by the service its code comes from.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  options: { top: { type: 'string', default: '25' }, focus: { type: 'string' }, 'min-ms': { type: 'string', default: '0' }, window: { type: 'string' } },
  allowPositionals: true,
});
const top = Number(values.top);
const focus = values.focus;
const minMs = Number(values['min-ms']);
const window = values.window ? (JSON.parse(readFileSync(values.window, 'utf8')) as { from: number; to: number }) : { from: -Infinity, to: Infinity };

/** `express`, `@opentelemetry/sdk-trace`, `(program)`, `node:internal/http`, `services/gateway`… */
function packageOf(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const parts = url.slice(modules + '/node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  const service = /\/services\/([^/]+)\//.exec(url);
  return service ? `services/${service[1]}` : url;
}

/** The service a profile's process ran: the one whose `main` module it loaded. */
function serviceOf(nodes: ProfileNode[]): string {
  for (const n of nodes) {
    const main = /\/services\/([^/]+)\/(?:dist|src)\/main\.[jt]s$/.exec(n.callFrame.url);
    if (main) return main[1]!;
  }
  return '?';
}

for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const label = (n: ProfileNode) => `${n.callFrame.functionName || '(anonymous)'} ${packageOf(n.callFrame.url, n.callFrame.functionName)}:${n.callFrame.lineNumber + 1}`;
  const stackOf = (id: number) => {
    const stack: ProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at)!);
    return stack;
  };
  const inFocus = new Map<number, boolean>();
  const focused = (id: number): boolean => {
    if (focus === undefined) return true;
    let answer = inFocus.get(id);
    if (answer === undefined) {
      answer = stackOf(id).some((n) => n.callFrame.functionName.includes(focus) || n.callFrame.url.includes(focus));
      inFocus.set(id, answer);
    }
    return answer;
  };
  const self = new Map<number, number>();
  // A sample's time is the profile's start plus the deltas so far; its delta is the time it stands for.
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at >= window.from && at <= window.to) self.set(id, (self.get(id) ?? 0) + delta);
  });
  let busy = 0;
  let total = 0;
  let idle = 0;
  const packages = new Map<string, number>();
  const functions = new Map<string, number>();
  const totals = new Map<string, number>();
  for (const [id, us] of self) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    busy += us;
    if (!focused(id)) continue;
    total += us;
    const pkg = packageOf(node.callFrame.url, node.callFrame.functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
    functions.set(label(node), (functions.get(label(node)) ?? 0) + us);
    // Total time: every function on the stack, once however often it recurses.
    for (const name of new Set(stackOf(id).map(label))) totals.set(name, (totals.get(name) ?? 0) + us);
  }
  if (busy / 1000 < minMs) continue;
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
  const rows = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `  ${pct(us)}  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`)
      .join('\n');
  const scope = focus === undefined ? '' : `, ${(total / 1000).toFixed(0)} ms under "${focus}"`;
  console.log(`\n${file} (${serviceOf(profile.nodes)}): ${(busy / 1000).toFixed(0)} ms busy${scope}, ${(idle / 1000).toFixed(0)} ms idle`);
  console.log(`by package (self time):\n${rows(packages)}`);
  console.log(`by function (self time):\n${rows(functions)}`);
  console.log(`by function (total time):\n${rows(totals)}`);
}
