import { LRUCache } from 'lru-cache';
import { AppError, canSee, counter, couldSee, looksLikeId, type CallerContext } from '@rundown/shared';
import type { CoordinatesPort, Layout, LayoutQuery } from '../domain/coordinates.js';

type Cue = Layout['cues'][number];
type Column = Layout['columns'][number];

/** One rundown's layout facts, as the rundown service answered them while `token` was its layout version. */
interface Entry {
  token: string;
  /** The team the rundown belongs to (it never changes): the caller's, since the rundown service answered it. */
  teamId: string;
  cues: Map<string, Cue>;
  columns: Map<string, Column>;
}

/** Reads a rundown's current layout version (one Redis round trip; see the shared `readFactVersion`). */
export type LayoutVersionReader = (rundownId: string) => Promise<string>;

/**
 * The coordinates port with a per-rundown cache of the whole layout (every cue's type and lock,
 * every public column's type, the rundown's team), valid while the rundown's layout version in
 * Redis is the one it was stored under. A read asks Redis for the version (while the caller reads
 * its cells from PostgreSQL: still one round trip deep) and answers from the cache when the
 * version matches; otherwise it asks the rundown service for everything, as before.
 *
 * Why a hit is as good as asking (services/cells/README.md, "Layout cache"):
 * - The rundown service replaces the version (a new random value) after every committed change of
 *   these facts and before answering it. An entry is stored under the version read BEFORE the
 *   rundown service was asked. If a change committed before that version was read, the answer
 *   (asked later) includes it. If it commits after, its new version is written after it and so
 *   after our read: the entry's version is no longer current and the next read asks again. An
 *   answer that already includes a change but sits under the version before it is merely asked
 *   again once. So once a change has been answered, no read that starts after it is served the
 *   facts from before it, on any replica (the version is in Redis, shared by all of them).
 * - The rundown's team never changes, and a token's rundown scope is checked here as the rundown
 *   service checks it (`scopeOf`, `describe`); anything it would refuse without reading the
 *   rundown goes to it unchanged.
 * - A version write that failed leaves old facts at most `maxAgeMs` (every entry's age limit).
 *   Redis not answering here: the rundown service is asked, nothing is cached.
 *
 * `query.fresh` (writes) always asks the rundown service.
 */
export class CachedCoordinates implements CoordinatesPort {
  private readonly entries: LRUCache<string, Entry>;
  /**
   * Misses being asked, by rundown, version and team: concurrent misses of one rundown (every display
   * reading after a change) share one question. Keyed by the version read, so a read that saw a newer
   * version never takes an answer asked under an older one; and by team, so one caller's refusal
   * (another team's rundown) is never another's answer.
   */
  private readonly asking = new Map<string, Promise<Entry>>();
  private readonly lookups = counter('cells.layout_cache.lookups', {
    description: 'Layout lookups of cell reads, by result: hit, miss (asked the rundown service), unavailable (no version from Redis)',
  });

  constructor(
    private readonly inner: CoordinatesPort,
    private readonly version: LayoutVersionReader,
    /** `maxFacts`: cues plus columns held, over all rundowns (least recently used go first); `maxAgeMs`: an entry's lifetime. */
    options: { maxFacts: number; maxAgeMs: number },
  ) {
    this.entries = new LRUCache<string, Entry>({
      maxSize: options.maxFacts,
      sizeCalculation: (entry) => Math.max(1, entry.cues.size + entry.columns.size),
      ttl: options.maxAgeMs,
    });
  }

  async describe(ctx: CallerContext, rundownId: string, query: LayoutQuery): Promise<Layout> {
    // What the rundown service refuses without reading the rundown (no team, another rundown's
    // token, an impossible id) and writes, which take nothing from the cache: asked as before.
    if (query.fresh || !looksLikeId(rundownId) || !couldSee(ctx, rundownId)) {
      return this.inner.describe(ctx, rundownId, query);
    }
    let token: string;
    try {
      token = await this.version(rundownId);
    } catch {
      this.lookups.add(1, { result: 'unavailable' });
      return this.inner.describe(ctx, rundownId, query);
    }
    let entry = this.entries.get(rundownId);
    if (entry?.token === token) {
      this.lookups.add(1, { result: 'hit' });
      // As the rundown service decides: another team's rundown does not exist.
      if (!canSee(ctx, { id: rundownId, teamId: entry.teamId })) throw new AppError('rundowns.not_found');
    } else {
      this.lookups.add(1, { result: 'miss' });
      entry = await this.ask(ctx, rundownId, token, ctx.teamId);
    }
    return select(entry, query);
  }

  /** The whole layout, asked once for every concurrent miss of (rundown, version, team), stored under `token`. */
  private ask(ctx: CallerContext, rundownId: string, token: string, teamId: string): Promise<Entry> {
    const key = `${rundownId}\u0000${token}\u0000${teamId}`;
    let pending = this.asking.get(key);
    if (!pending) {
      pending = this.inner.describe(ctx, rundownId, { allCues: true, allColumns: true }).then((layout) => {
        const entry: Entry = {
          token,
          teamId,
          cues: new Map(layout.cues.map((c) => [c.id, c])),
          columns: new Map(layout.columns.map((c) => [c.id, c])),
        };
        this.entries.set(rundownId, entry);
        return entry;
      });
      this.asking.set(key, pending);
      const done = () => void this.asking.delete(key);
      pending.then(done, done);
    }
    return pending;
  }

  existing(rundownIds: string[]): Promise<Set<string>> {
    return this.inner.existing(rundownIds);
  }
}

/** What the rundown service would answer to `query` (each asked id once; order is not part of the answer). */
function select(entry: Entry, query: LayoutQuery): Layout {
  const pick = <T>(all: Map<string, T>, every: boolean | undefined, ids: string[] | undefined): T[] =>
    every ? [...all.values()] : [...new Set(ids ?? [])].flatMap((id) => all.get(id) ?? []);
  return { cues: pick(entry.cues, query.allCues, query.cueIds), columns: pick(entry.columns, query.allColumns, query.columnIds) };
}
