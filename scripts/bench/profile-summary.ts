// Where a process's CPU time goes: self time of a `node --cpu-prof` profile, by package and by function.
//
//   node --conditions=source --import tsx scripts/bench/profile-summary.ts <file.cpuprofile>... [--top 25] [--from 15]
//
// --from <s>: only samples taken at least <s> seconds after the profile started (leaves startup out).
//
// Also total time (self plus callees, each sample counted once per function on its stack), which
// shows what a middleware or an instrumentation wrapper costs with everything it calls.
//
// `npm run bench:edge -- --profile <dir>` writes one profile per service process into <dir>.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '25' }, from: { type: 'string', default: '0' } }, allowPositionals: true });
const top = Number(values.top);
const fromUs = Number(values.from) * 1e6;

/** `express`, `@opentelemetry/instrumentation-http`, `(program)`, `node:internal/http`, `gateway`… */
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

for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  let at = 0;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (at >= fromUs) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  let total = 0;
  let idle = 0;
  const packages = new Map<string, number>();
  const functions = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const nameOf = (f: ProfileNode['callFrame']) => `${f.functionName || '(anonymous)'} ${packageOf(f.url, f.functionName)}:${f.lineNumber + 1}`;
  for (const [id, us] of self) {
    const { callFrame: f } = byId.get(id)!;
    if (f.functionName === '(idle)') {
      idle += us;
      continue;
    }
    total += us;
    const pkg = packageOf(f.url, f.functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
    const fn = nameOf(f);
    functions.set(fn, (functions.get(fn) ?? 0) + us);
    const onStack = new Set<string>();
    for (let node: number | undefined = id; node !== undefined; node = parent.get(node)) onStack.add(nameOf(byId.get(node)!.callFrame));
    for (const name of onStack) inclusive.set(name, (inclusive.get(name) ?? 0) + us);
  }
  inclusive.delete(nameOf(profile.nodes[0]!.callFrame));
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
  const rows = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `  ${pct(us)}  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`)
      .join('\n');
  console.log(`\n${file}: ${(total / 1000).toFixed(0)} ms busy, ${(idle / 1000).toFixed(0)} ms idle`);
  console.log(`by package (self time):\n${rows(packages)}`);
  console.log(`by function (self time):\n${rows(functions)}`);
  console.log(`by function (total time):\n${rows(inclusive)}`);
}
