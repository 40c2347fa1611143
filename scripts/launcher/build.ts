// `npm start` runs the compiled services; this builds them first when a source is newer than the
// last build (an mtime check per workspace, so an unchanged tree starts at once).
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { LauncherError, REPO_ROOT, lastLines, log, run } from './util.js';

/** Written into `dist/` after a successful build; its mtime is the build's time. */
const STAMP = '.built';
/** Files outside a workspace that change what it compiles to. */
const SHARED_INPUTS = ['tsconfig.base.json'];
/** What a workspace's build writes or reads without building it. */
const NOT_INPUTS = new Set(['dist', 'node_modules']);
/** A workspace's build step after tsc, when it has one: its browser assets (the gateway's docs renderer and stage screen). */
const ASSETS_SCRIPT = 'scripts/build-assets.mjs';

/** The newest modification time under `target` (test files aside), 0 when it does not exist. */
export function newestMtime(target: string): number {
  if (!existsSync(target)) return 0;
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted file changes its folder's mtime
  for (const entry of readdirSync(target, { withFileTypes: true })) {
    if (entry.isFile() && (entry.name.endsWith('.test.ts') || entry.name.endsWith('.md'))) continue;
    newest = Math.max(newest, newestMtime(path.join(target, entry.name)));
  }
  return newest;
}

/** A workspace's inputs: everything in its folder but its build output (the folder's own mtime changes with dist/). */
function newestInput(dir: string): number {
  return Math.max(
    0,
    ...readdirSync(dir, { withFileTypes: true })
      .filter((entry) => !NOT_INPUTS.has(entry.name))
      .map((entry) => newestMtime(path.join(dir, entry.name))),
  );
}

/**
 * The workspaces package.json names (`services/*`: every service folder, so a new service needs no entry).
 * Order does not matter: each service compiles against the shared library's sources (its `types`).
 */
function workspaces(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { workspaces: string[] };
  return pkg.workspaces.flatMap((pattern) => {
    if (!pattern.endsWith('/*')) return [pattern];
    const parent = pattern.slice(0, -2);
    return readdirSync(path.join(REPO_ROOT, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(path.join(REPO_ROOT, parent, entry.name, 'package.json')))
      .map((entry) => `${parent}/${entry.name}`)
      .sort();
  });
}

/** Workspaces whose sources are newer than their build. */
export function staleWorkspaces(): string[] {
  const common = Math.max(...SHARED_INPUTS.map((file) => newestMtime(path.join(REPO_ROOT, file))));
  return workspaces().filter((workspace) => {
    const dir = path.join(REPO_ROOT, workspace);
    if (!existsSync(path.join(dir, 'tsconfig.build.json'))) return false;
    // Our stamp if there is one, else the entry point tsc wrote (a plain `npm run build`, as CI runs before the tests).
    const [built = 0] = [STAMP, 'main.js', 'index.js'].map((file) => path.join(dir, 'dist', file)).filter((file) => existsSync(file)).map((file) => statSync(file).mtimeMs);
    const inputs = Math.max(common, newestInput(dir));
    return inputs > built;
  });
}

/**
 * Builds every stale workspace as its `npm run build` does (tsc, then its assets script if it has
 * one), as many at once as the machine has cores (none needs another's output); a type error or a
 * failed assets build stops the start with the tool's output.
 */
export async function ensureBuilt(): Promise<void> {
  const stale = staleWorkspaces();
  if (stale.length === 0) return;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const parallel = Math.max(1, Math.min(stale.length, availableParallelism()));
  const started = Date.now();
  log(`building ${stale.length} workspace${stale.length === 1 ? '' : 's'} (${stale.join(', ')}), ${parallel} at a time`);
  const queue = [...stale];
  const build = async (workspace: string): Promise<void> => {
    const began = Date.now();
    const dir = path.join(REPO_ROOT, workspace);
    const result = await run(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.build.json')], { timeoutMs: 300_000 });
    if (result.code !== 0) throw new LauncherError(`building ${workspace} failed; tsc says:`, lastLines(result.output, 60));
    if (existsSync(path.join(dir, ASSETS_SCRIPT))) {
      const assets = await run(process.execPath, [ASSETS_SCRIPT], { cwd: dir, timeoutMs: 120_000 });
      if (assets.code !== 0) throw new LauncherError(`building ${workspace}'s assets (${ASSETS_SCRIPT}) failed:`, lastLines(assets.output, 60));
    }
    // Stamped with the time the build started: a source saved while tsc ran is newer, so rebuilt next time.
    const stamp = path.join(dir, 'dist', STAMP);
    writeFileSync(stamp, `${new Date(began).toISOString()}\n`);
    utimesSync(stamp, began / 1000, began / 1000);
    log(`built ${workspace} (${Date.now() - began} ms)`);
  };
  // A failed build keeps the next ones from starting; the ones under way finish before it is told.
  let failure: unknown;
  const worker = async (): Promise<void> => {
    for (let next = queue.shift(); next !== undefined && failure === undefined; next = queue.shift()) {
      await build(next).catch((error: unknown) => void (failure ??= error));
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  if (failure !== undefined) throw failure;
  if (stale.length > 1) log(`built ${stale.length} workspaces in ${Date.now() - started} ms`);
}
