import pg from 'pg';
import { system } from './client.js';

/**
 * Reads the system's database directly, for invariants the API hides by design (where private
 * columns sit in a rundown's order). Tests never write through it.
 */
export async function query<T = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: system().databaseUrl });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Every column id of the rundown in order (private ones included), and which are private. */
export async function storedColumns(rundownId: string): Promise<{ order: string[]; private: Set<string>; rows: number }> {
  const [rundown] = await query<{ column_ids: string[] }>('SELECT column_ids FROM rundown.rundowns WHERE id = $1', [rundownId]);
  const rows = await query<{ id: string; private: boolean }>('SELECT id, private FROM rundown.columns WHERE rundown_id = $1', [rundownId]);
  return { order: rundown!.column_ids, private: new Set(rows.filter((r) => r.private).map((r) => r.id)), rows: rows.length };
}
