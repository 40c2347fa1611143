import { inject } from 'vitest';
import { createServiceDatabase, type CallerContext, type Database } from '@rundown/shared';
import type { CellsPort } from '../../services/rundown/src/domain/cells-port.js';
import type { PlanFacts } from '../../services/rundown/src/domain/rundowns.js';
import { rundownDomain } from '../../services/rundown/src/wiring.js';

/**
 * The medium tier: a service's domain and repositories, wired as the service wires them, against
 * real PostgreSQL (the tier's migrated database) — no transport, no gateway. New services grow
 * this tier for their rules instead of the end-to-end suite.
 */
export async function openDatabase(name: string, poolSize = 10): Promise<Database> {
  const db = createServiceDatabase({ url: inject('databaseUrl'), applicationName: `medium-${name}`, poolSize });
  return db.initialize();
}

/** The quota auth would answer (the free plan's 10): plan facts are the auth service's, outside this tier. */
export const quota: PlanFacts = { maxRundowns: () => Promise.resolve(10) };

export const domainOf = (db: Database, cells?: CellsPort) =>
  rundownDomain(db, { cursorSecret: 'c'.repeat(32), plan: quota, ...(cells ? { cells } : {}) });

let teams = 0;
/** A caller of a fresh team (so tests never see each other's rundowns). */
export function teamCaller(extra: Partial<CallerContext> = {}): CallerContext {
  return { requestId: 'req_medium', teamId: `team_m_${Date.now()}_${teams++}`, role: 'OWNER', ...extra };
}

export const emptyRundown = { timezone: null, start_time: null, status: undefined, settings: undefined, columns: [], cues: [] };

/** A new rundown of a fresh team, with public columns of these names: its caller and id. */
export async function newRundown(domain: ReturnType<typeof domainOf>, title: string, columns: string[] = []): Promise<{ ctx: CallerContext; id: string }> {
  const ctx = teamCaller();
  const { result } = await domain.rundowns.create(ctx, { ...emptyRundown, title, columns: columns.map((name) => ({ name })) });
  return { ctx, id: result.id };
}
