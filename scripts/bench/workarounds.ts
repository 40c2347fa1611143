// `npm run bench:workarounds`: each place the code leans on a library's internals or replaces its
// mechanism, measured against the plain library in one run (docs/performance.md keeps those that
// gain at least 10 % here, with their figure):
//   bind    the lean AsyncResource#bind against Node's own: sequential unary grpc-js calls in one
//           process, time per call and GC time
// The v0 write coalescing (Engine.IO's private flush) is measured by `npm run bench:v0` against the
// same bare Socket.IO server without it.
//   options: --only bind --rounds 3 --json
// Loopback only; every loop is bounded by time or count.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { quick, recordFigure } from './figures.js';
import { percentile } from './stats.js';

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: 'bind' },
    rounds: { type: 'string', default: quick ? '2' : '3' },
    json: { type: 'boolean', default: false },
  },
  strict: true,
});
const parts = new Set(values.only.split(','));
const rounds = Number(values.rounds);
const CHILD = new URL('./workaround-servers.ts', import.meta.url).pathname;

interface Verdict {
  what: string;
  measure: string;
  plain: number;
  workaround: number;
  /** How much less the workaround costs than the plain library, in % (positive: it gains). */
  gain: number;
}
const verdicts: Verdict[] = [];
const lowerIsBetter = (what: string, measure: string, plain: number, workaround: number) =>
  verdicts.push({ what, measure, plain, workaround, gain: (100 * (plain - workaround)) / plain });

const children: ChildProcess[] = [];
function startChild(kind: string, variant: string, env: Record<string, string> = {}): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', CHILD, kind, variant], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${kind} ${variant} exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('PORT ') || line.startsWith('RESULT ')) resolve({ child, line });
    });
  });
}

const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);

try {
  if (parts.has('bind')) {
    const results = { node: [] as { us_per_call: number; gc_ms_per_1000_calls: number }[], lean: [] as { us_per_call: number; gc_ms_per_1000_calls: number }[] };
    for (let r = 0; r < rounds; r++) {
      for (const variant of ['node', 'lean'] as const) {
        const { line } = await startChild('bind', variant, { BIND_CALLS: quick ? '5000' : '20000' });
        results[variant].push(JSON.parse(line.slice(7)));
      }
    }
    const per = (v: 'node' | 'lean', k: 'us_per_call' | 'gc_ms_per_1000_calls') => median(results[v].map((x) => x[k]));
    lowerIsBetter('AsyncResource#bind replaced (Node 20)', 'sequential grpc-js unary call (µs)', per('node', 'us_per_call'), per('lean', 'us_per_call'));
    lowerIsBetter('AsyncResource#bind replaced (Node 20)', 'GC time per 1,000 calls (ms)', per('node', 'gc_ms_per_1000_calls'), per('lean', 'gc_ms_per_1000_calls'));
  }
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
}

for (const v of verdicts) {
  recordFigure({ bench: 'workarounds', name: `${v.what}: ${v.measure}`, unit: '%', value: v.gain, baseline: `plain library ${v.plain.toFixed(1)}`, goal: '>= 10 to keep' });
}
if (values.json) process.stdout.write(`${JSON.stringify(verdicts)}\n`);
else {
  console.log('Workarounds against the plain library (same run; gain = how much less the workaround costs):');
  for (const v of verdicts) {
    console.log(`  ${v.what}\n    ${v.measure.padEnd(52)} plain ${v.plain.toFixed(2).padStart(9)}  with it ${v.workaround.toFixed(2).padStart(9)}  gain ${v.gain.toFixed(1).padStart(6)} %  ${v.gain >= 10 ? 'keeps its place' : 'under 10 %'}`);
  }
}
