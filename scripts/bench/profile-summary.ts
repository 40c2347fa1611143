// Where a process's CPU time goes: self time of a `node --cpu-prof` profile, by package and by function.
//
//   node --conditions=source --import tsx scripts/bench/profile-summary.ts <file.cpuprofile>... [--top 25]
//        [--window <file.json>]: only the samples between its `from` and `to` (µs of the monotonic clock
//        that profiles and `process.hrtime` share), e.g. the measured phase a bench wrote beside its profiles
//
// `npm run bench:edge -- --profile <dir>` writes one profile per service process into <dir>.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '25' }, window: { type: 'string' } }, allowPositionals: true });
const top = Number(values.top);
const window = values.window ? (JSON.parse(readFileSync(values.window, 'utf8')) as { from: number; to: number }) : { from: -Infinity, to: Infinity };

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
  const self = new Map<number, number>();
  // A sample's time is the profile's start plus the deltas so far; its delta is the time it stands for.
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at >= window.from && at <= window.to) self.set(id, (self.get(id) ?? 0) + delta);
  });
  let total = 0;
  let idle = 0;
  const packages = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, us] of self) {
    const { callFrame: f } = byId.get(id)!;
    if (f.functionName === '(idle)') {
      idle += us;
      continue;
    }
    total += us;
    const pkg = packageOf(f.url, f.functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
    const fn = `${f.functionName || '(anonymous)'} ${pkg}:${f.lineNumber + 1}`;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
  }
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
}
