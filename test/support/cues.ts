import { expect } from 'vitest';
import { v1 } from './client.js';
import { query } from './db.js';

export interface CueJson {
  id: string;
  type: string;
  title: string;
  duration_ms: number;
  skip: boolean;
  skipped_by: string | null;
  parent_id: string | null;
  [field: string]: unknown;
}

export async function listCues(token: string, rundownId: string): Promise<CueJson[]> {
  const res = await v1('GET', `/rundowns/${rundownId}/cues`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body.data.items;
}

/**
 * The invariants every cue write keeps: the rundown's cue_order and its cues agree (same ids,
 * parents and order, read in one snapshot), the stored cue rows are exactly the ids in the order
 * (none lost, none orphaned), no id twice, groups only at root, and end_time = start_time + the
 * playable durations.
 */
export async function expectCueInvariants(token: string, rundownId: string) {
  const res = await v1('GET', `/rundowns/${rundownId}`, { token, query: { include: 'cues' } });
  expect(res.status, res.text).toBe(200);
  const rundown = res.body.data;
  const items = res.body.included.cues as CueJson[];
  // The order and the list both come from the service; the rows themselves are the independent witness.
  const rows = await query<{ id: string }>('SELECT id FROM rundown.cues WHERE rundown_id = $1', [rundownId]);
  expect(new Set(rows.map((r) => r.id))).toEqual(new Set(items.map((c) => c.id)));
  expect(rows).toHaveLength(items.length);
  const flattened = (rundown.cue_order as { id: string; children?: { id: string }[] }[]).flatMap((n) => [
    { id: n.id, parent_id: null as string | null },
    ...(n.children ?? []).map((c) => ({ id: c.id, parent_id: n.id })),
  ]);
  expect(items.map((c) => ({ id: c.id, parent_id: c.parent_id }))).toEqual(flattened);
  expect(new Set(items.map((c) => c.id)).size).toBe(items.length);
  const types = new Map(items.map((c) => [c.id, c.type]));
  for (const child of items.filter((c) => c.parent_id !== null)) {
    expect(types.get(child.parent_id!)).toBe('group');
    expect(child.type).not.toBe('group');
  }
  if (rundown.start_time !== null) {
    const playable = items.filter((c) => c.type === 'cue' && c.skipped_by === null).reduce((sum, c) => sum + c.duration_ms, 0);
    expect(rundown.end_time).toBe(rundown.start_time + playable);
  }
  return { rundown, items };
}
