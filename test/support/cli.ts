import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { system } from './client.js';
import { NODE_ARGS } from '../../scripts/launcher/util.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');

/** `npm run admin -- ...`, as an operator runs it, against the system under test. */
export async function adminCli(...args: string[]) {
  const s = system();
  return run(process.execPath, [...NODE_ARGS, 'scripts/admin.ts', ...args], {
    cwd: root,
    env: { ...process.env, ADMIN_URL: s.adminUrl, ADMIN_SECRET: s.adminSecret },
  });
}
