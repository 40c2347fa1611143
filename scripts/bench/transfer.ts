// `npm run bench:transfer`: export and import of a whole rundown (docs/import-export.md) over HTTP, as a client
// sees them, each beside a baseline measured in the same run on the same rundown:
//   - GET /export (JSON, and CSV) of a 1,000-cue, 20-column rundown with a cell in every column of
//     every cue (20,000 cells, minus the groups'), against GET /rundowns/:id?include=cues of it;
//   - POST /rundowns:import of its CSV (1,000 cues, 20 columns, the cells), against the equivalent
//     create (POST /rundowns with the same cues, columns and cells);
//   - POST /rundowns:import of a JSON document of 1,000 cues and 20 columns with 3 cells a cue (a
//     document with every cell of that rundown is over the 1 MB body limit: docs/import-export.md).
// Starts the whole system as production runs it (compiled, telemetry on, exported to a local sink),
// on loopback, with a database of its own and Redis db BENCH_REDIS_DB (default 11).
//   options: --iterations 15 --reads 30 --profile <dir>
import { parseArgs } from 'node:util';
import { quick, recordFigure } from './figures.js';
import { formatSummary, profileWindow, summarize } from './stats.js';
import { must, startBenchSystem, type Cleanup, type Loose } from './support.js';

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: quick ? '5' : '15' },
    reads: { type: 'string', default: quick ? '10' : '30' },
    // Every service process writes a CPU profile (node --cpu-prof) into <dir> when it stops; the
    // export reads' span is written as <dir>/export-window.json (profile-summary.ts --window).
    profile: { type: 'string' },
  },
  strict: true,
});
const iterations = Number(values.iterations);
const reads = Number(values.reads);
const BENCH = 'transfer';
const CUES = 1_000;
const COLUMNS = 20;

type Summary = ReturnType<typeof summarize>;

async function timed(n: number, work: () => Promise<void>): Promise<Summary> {
  await work(); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await work();
    samples.push(performance.now() - t0);
  }
  return summarize(samples);
}

async function send(url: string, method: string, token: string, body: string | undefined, contentType: string, accept = 'application/json'): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method, headers: { authorization: `Bearer ${token}`, accept, ...(body === undefined ? {} : { 'content-type': contentType }) }, body });
  return { status: res.status, text: await res.text() };
}

const cleanups: Cleanup[] = [];
try {
  const { system } = await startBenchSystem('rundown_bench_transfer', 11, cleanups, {
    ...(values.profile ? { env: { LAUNCH_NODE_ARGS: `--cpu-prof --cpu-prof-dir=${values.profile}` } } : {}),
  });
  const { base_url: base, admin_url: adminUrl, admin_secret: adminSecret } = system.ready;
  const team = await must(`${adminUrl}/teams`, 'POST', adminSecret, { name: 'bench-transfer', plan: 'paid', rate_limit_per_minute: 1_000_000, max_rundowns: 100_000 }, 201);
  const token = (await must(`${adminUrl}/teams/${team.id}/tokens`, 'POST', adminSecret, { role: 'OWNER' }, 201)).token as string;

  // The rundown: 10 groups of 9 children among 900 root cues (1,000 in all), 20 text columns, a cell
  // in every column of every cue of type cue.
  const names = Array.from({ length: COLUMNS }, (_, i) => `Col ${i + 1}`);
  const cells = (cue: number, filled: number) => Object.fromEntries(names.slice(0, filled).map((name, k) => [name, `r${cue} c${k} text`]));
  const cues = (filled: number) => {
    const list: Loose[] = [];
    let n = 0;
    for (let g = 0; g < 10; g++) {
      n++;
      list.push({ type: 'group', title: `Block ${g}`, children: Array.from({ length: 9 }, () => ({ title: `Cue ${++n}`, duration_ms: 60_000, cells: cells(n, filled) })) });
    }
    while (n < CUES) list.push({ title: `Cue ${++n}`, duration_ms: 30_000, cells: cells(n, filled) });
    return list;
  };
  const createBody = JSON.stringify({ title: 'Bench', timezone: 'Europe/Berlin', columns: names.map((name) => ({ name })), cues: cues(COLUMNS) });
  const full = await must(`${base}/rundowns`, 'POST', token, JSON.parse(createBody), 201);

  const readBaseline = await timed(reads, async () => {
    const r = await send(`${base}/rundowns/${full.id}?include=cues`, 'GET', token, undefined, '');
    if (r.status !== 200) throw new Error(`GET ?include=cues answered ${r.status}`);
  });
  const exportWindowEnds = profileWindow(values.profile, 'export-window.json');
  let jsonBytes = 0;
  let exportedCells = 0;
  const exportJson = await timed(reads, async () => {
    const r = await send(`${base}/rundowns/${full.id}/export`, 'GET', token, undefined, '');
    if (r.status !== 200) throw new Error(`export answered ${r.status}: ${r.text.slice(0, 300)}`);
    jsonBytes = r.text.length;
    exportedCells = (JSON.parse(r.text) as Loose).data.cues.reduce((sum: number, c: Loose) => sum + Object.keys(c.cells).length, 0);
  });
  let csv = '';
  const exportCsv = await timed(reads, async () => {
    const r = await send(`${base}/rundowns/${full.id}/export`, 'GET', token, undefined, '', 'text/csv');
    if (r.status !== 200) throw new Error(`CSV export answered ${r.status}`);
    csv = r.text;
  });
  exportWindowEnds();
  if (exportedCells !== (CUES - 10) * COLUMNS) throw new Error(`the export has ${exportedCells} cells`);

  const createBaseline = await timed(iterations, async () => {
    const r = await send(`${base}/rundowns`, 'POST', token, createBody, 'application/json');
    if (r.status !== 201) throw new Error(`create answered ${r.status}: ${r.text.slice(0, 300)}`);
  });
  const importCsv = await timed(iterations, async () => {
    const r = await send(`${base}/rundowns:import?title=Imported&timezone=Europe%2FBerlin`, 'POST', token, csv, 'text/csv');
    if (r.status !== 201) throw new Error(`CSV import answered ${r.status}: ${r.text.slice(0, 300)}`);
  });

  // JSON: the export of a 1,000-cue, 20-column rundown with 3 cells a cue.
  const sparse = await must(`${base}/rundowns`, 'POST', token, { title: 'Bench sparse', columns: names.map((name) => ({ name })), cues: cues(3) }, 201);
  const documentText = JSON.stringify((await must(`${base}/rundowns/${sparse.id}/export`, 'GET', token)) as Loose);
  const importJson = await timed(iterations, async () => {
    const r = await send(`${base}/rundowns:import`, 'POST', token, documentText, 'application/json');
    if (r.status !== 201) throw new Error(`JSON import answered ${r.status}: ${r.text.slice(0, 300)}`);
  });

  const figure = (name: string, s: Summary, extra: Partial<Parameters<typeof recordFigure>[0]> = {}) =>
    recordFigure({ bench: BENCH, name, unit: 'ms', n: s.n, p50: s.p50, p99: s.p99, max: s.max, ...extra });
  const what = `${CUES} cues, ${COLUMNS} columns`;
  figure(`GET /rundowns/:id?include=cues (${what})`, readBaseline);
  figure(`GET /export JSON (${what}, ${exportedCells} cells)`, exportJson, { baseline: `GET /rundowns/:id?include=cues (${what})`, ratio: exportJson.p50 / readBaseline.p50, goal: 'p50 <= 300 ms' });
  figure(`GET /export CSV (${what}, ${exportedCells} cells)`, exportCsv, { baseline: `GET /rundowns/:id?include=cues (${what})`, ratio: exportCsv.p50 / readBaseline.p50, goal: 'p50 <= 300 ms' });
  figure(`POST /rundowns, the equivalent create (${what})`, createBaseline);
  figure(`POST /rundowns:import CSV (${what}, ${exportedCells} cells)`, importCsv, { baseline: `POST /rundowns, the equivalent create (${what})`, ratio: importCsv.p50 / createBaseline.p50, goal: 'p50 <= 1 s' });
  figure(`POST /rundowns:import JSON (${what}, 3 cells a cue)`, importJson, { baseline: `POST /rundowns, the equivalent create (${what})`, ratio: importJson.p50 / createBaseline.p50, goal: 'p50 <= 1 s' });

  console.log(`import/export benchmark (compiled services, telemetry on): ${what}\n`);
  console.log(formatSummary('GET /rundowns/:id?include=cues (baseline)', readBaseline));
  console.log(`${formatSummary('GET /export JSON', exportJson)}  ${jsonBytes} bytes, ${exportedCells} cells, p50 ratio ${(exportJson.p50 / readBaseline.p50).toFixed(2)}`);
  console.log(`${formatSummary('GET /export CSV', exportCsv)}  ${csv.length} bytes, p50 ratio ${(exportCsv.p50 / readBaseline.p50).toFixed(2)}`);
  console.log(`${formatSummary('POST /rundowns equivalent create (baseline)', createBaseline)}  ${createBody.length} bytes`);
  console.log(`${formatSummary('POST /rundowns:import CSV', importCsv)}  ${csv.length} bytes, p50 ratio ${(importCsv.p50 / createBaseline.p50).toFixed(2)}`);
  console.log(`${formatSummary('POST /rundowns:import JSON (3 cells a cue)', importJson)}  ${documentText.length} bytes, p50 ratio ${(importJson.p50 / createBaseline.p50).toFixed(2)}`);
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
}
