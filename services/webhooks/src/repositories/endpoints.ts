import type { Db, Logger } from '@rundown/shared';
import type { SecretSeal } from './secret-seal.js';

export interface EndpointRow {
  id: string;
  team_id: string;
  url: string;
  events: string[];
  rundown_id: string | null;
  description: string;
  enabled: boolean;
  disabled_reason: string | null;
  /** As stored: sealed (secret-seal.ts); `secretOf` opens it. */
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** An endpoint as the fan-out sees it. */
export type Receiver = Pick<EndpointRow, 'id' | 'events' | 'rundown_id' | 'created_at' | 'url' | 'secret' | 'previous_secret'>;

export interface EndpointChanges {
  url?: string;
  events?: string[];
  rundown_id?: string | null;
  description?: string;
  enabled?: boolean;
}

/**
 * Endpoints and their secrets (schema `webhooks`); every read and write is scoped by team. Secrets
 * are written sealed (secret-seal.ts) and read as stored; `secretOf` and `signingSecrets` open them
 * where they are used, so a secret that no longer opens fails its own endpoint's attempts alone.
 */
export class EndpointsRepository {
  constructor(private readonly seal: SecretSeal) {}

  /** An endpoint's current secret, opened. */
  secretOf(row: Pick<EndpointRow, 'id' | 'secret'>): string {
    return this.seal.open(row.id, row.secret);
  }

  /** The secrets an attempt to the endpoint signs with (the current one, and the previous one during a rotation's overlap), opened. */
  signingSecrets(endpointId: string, stored: { secret: string; previous_secret: string | null }): string[] {
    const current = this.seal.open(endpointId, stored.secret);
    return stored.previous_secret === null ? [current] : [current, this.seal.open(endpointId, stored.previous_secret)];
  }

  async count(db: Db, teamId: string): Promise<number> {
    const [row] = (await db.query('SELECT count(*)::int AS n FROM webhooks.endpoints WHERE team_id = $1', [teamId])) as { n: number }[];
    return row?.n ?? 0;
  }

  /** Serializes the creates of one team (the cap is counted under it). */
  async lockTeam(db: Db, teamId: string): Promise<void> {
    await db.query(`SELECT pg_advisory_xact_lock(hashtext('webhooks-team:' || $1))`, [teamId]);
  }

  async insert(db: Db, row: Pick<EndpointRow, 'id' | 'team_id' | 'url' | 'events' | 'rundown_id' | 'description' | 'enabled' | 'secret'>): Promise<EndpointRow> {
    const [inserted] = (await db.query(
      `INSERT INTO webhooks.endpoints (id, team_id, url, events, rundown_id, description, enabled, secret)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [row.id, row.team_id, row.url, row.events, row.rundown_id, row.description, row.enabled, this.seal.seal(row.id, row.secret)],
    )) as EndpointRow[];
    return inserted!;
  }

  async list(db: Db, teamId: string): Promise<EndpointRow[]> {
    return (await db.query('SELECT * FROM webhooks.endpoints WHERE team_id = $1 ORDER BY created_at, id', [teamId])) as EndpointRow[];
  }

  async find(db: Db, teamId: string, id: string): Promise<EndpointRow | undefined> {
    const [row] = (await db.query('SELECT * FROM webhooks.endpoints WHERE team_id = $1 AND id = $2', [teamId, id])) as EndpointRow[];
    return row;
  }

  /** Any team's endpoint (the delivery path and support). */
  async byId(db: Db, id: string): Promise<EndpointRow | undefined> {
    const [row] = (await db.query('SELECT * FROM webhooks.endpoints WHERE id = $1', [id])) as EndpointRow[];
    return row;
  }

  /**
   * Applies the changes; enabling (again) clears the disable and the failure streak, so it resumes
   * with new events.
   */
  async update(db: Db, teamId: string, id: string, changes: EndpointChanges): Promise<EndpointRow | undefined> {
    const sets: string[] = [];
    const values: unknown[] = [teamId, id];
    const set = (column: string, value: unknown) => {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    };
    if (changes.url !== undefined) set('url', changes.url);
    if (changes.events !== undefined) set('events', changes.events);
    if (changes.rundown_id !== undefined) set('rundown_id', changes.rundown_id);
    if (changes.description !== undefined) set('description', changes.description);
    if (changes.enabled !== undefined) {
      set('enabled', changes.enabled);
      if (changes.enabled) sets.push('disabled_reason = NULL', 'failing_since = NULL');
    }
    sets.push('updated_at = clock_timestamp()');
    const [row] = (await db.query(`UPDATE webhooks.endpoints SET ${sets.join(', ')} WHERE team_id = $1 AND id = $2 RETURNING *`, values)) as EndpointRow[];
    return row;
  }

  async delete(db: Db, teamId: string, id: string): Promise<boolean> {
    const rows = (await db.query('DELETE FROM webhooks.endpoints WHERE team_id = $1 AND id = $2 RETURNING id', [teamId, id])) as unknown[];
    return rows.length > 0;
  }

  /** The new secret signs from now on; the current one keeps signing beside it until `overlapUntil`. */
  async rotate(db: Db, teamId: string, id: string, secret: string, overlapUntil: Date): Promise<boolean> {
    const rows = (await db.query(
      `UPDATE webhooks.endpoints SET previous_secret = secret, previous_secret_until = $4, secret = $3, updated_at = clock_timestamp()
       WHERE team_id = $1 AND id = $2 RETURNING id`,
      [teamId, id, this.seal.seal(id, secret), overlapUntil],
    )) as unknown[];
    return rows.length > 0;
  }

  /** The team's enabled endpoints that may want events of this rundown, with what an attempt needs (the secrets that sign now). */
  async receiving(db: Db, teamId: string, rundownId: string): Promise<Receiver[]> {
    return (await db.query(
      `SELECT id, events, rundown_id, created_at, url, secret, CASE WHEN previous_secret_until > clock_timestamp() THEN previous_secret END AS previous_secret
       FROM webhooks.endpoints WHERE team_id = $1 AND enabled AND (rundown_id IS NULL OR rundown_id = $2)`,
      [teamId, rundownId],
    )) as Receiver[];
  }

  /**
   * Seals again every secret not sealed with the key that seals now: one stored before sealing
   * existed, or sealed with a key that has since moved down the ring. Each row is changed only if
   * its secrets are still what was read (a rotation meanwhile wins). A secret no key opens is logged
   * and left. Answers how many rows were sealed again.
   */
  async sealAll(db: Db, logger: Logger): Promise<number> {
    let sealed = 0;
    for (let after = ''; ; ) {
      const rows = (await db.query(
        `SELECT id, secret, previous_secret FROM webhooks.endpoints
         WHERE id > $2 AND (secret NOT LIKE $1 OR previous_secret NOT LIKE $1) ORDER BY id LIMIT 500`,
        [this.seal.currentPattern(), after],
      )) as { id: string; secret: string; previous_secret: string | null }[];
      if (rows.length === 0) return sealed;
      after = rows.at(-1)!.id;
      for (const row of rows) {
        let next: { secret: string; previous_secret: string | null };
        try {
          next = {
            secret: this.seal.sealedNow(row.id, row.secret),
            previous_secret: row.previous_secret === null ? null : this.seal.sealedNow(row.id, row.previous_secret),
          };
        } catch (error) {
          logger.error({ err: (error as Error).message, webhook_id: row.id }, 'a webhook signing secret could not be opened to seal it again; its deliveries fail until its key is listed again');
          continue;
        }
        const changed = (await db.query(
          `UPDATE webhooks.endpoints SET secret = $2, previous_secret = $3
           WHERE id = $1 AND secret = $4 AND previous_secret IS NOT DISTINCT FROM $5 RETURNING id`,
          [row.id, next.secret, next.previous_secret, row.secret, row.previous_secret],
        )) as unknown[];
        sealed += changed.length;
      }
    }
  }

  /** Attempts to these endpoints succeeded: their failure streaks end. */
  async succeeded(db: Db, ids: readonly string[]): Promise<void> {
    if (ids.length) await db.query('UPDATE webhooks.endpoints SET failing_since = NULL WHERE id = ANY($1::text[]) AND failing_since IS NOT NULL', [ids]);
  }

  /** An attempt failed: the streak starts now unless it runs already; answers since when it runs. */
  async failed(db: Db, id: string): Promise<Date | null> {
    const [row] = (await db.query(
      'UPDATE webhooks.endpoints SET failing_since = coalesce(failing_since, clock_timestamp()) WHERE id = $1 RETURNING failing_since',
      [id],
    )) as { failing_since: Date }[];
    return row?.failing_since ?? null;
  }

  async disable(db: Db, id: string, reason: string): Promise<void> {
    await db.query('UPDATE webhooks.endpoints SET enabled = false, disabled_reason = $2, updated_at = clock_timestamp() WHERE id = $1 AND enabled', [id, reason]);
  }
}
