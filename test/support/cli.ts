import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { system } from './client.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');

/** `npm run admin -- ...`, as an operator runs it, against the system under test. */
export async function adminCli(...args: string[]) {
  const s = system();
  return run(process.execPath, ['--conditions=source', '--import', 'tsx', 'scripts/admin.ts', ...args], {
    cwd: root,
    env: { ...process.env, ADMIN_URL: s.adminUrl, ADMIN_SECRET: s.adminSecret },
  });
}
