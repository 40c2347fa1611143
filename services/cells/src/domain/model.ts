import type { CellContent } from './content.js';

/**
 * The cells context's records: what its repository stores and reads and its domain and events
 * work on. Repository, domain and events import them from here.
 */

export interface CellRow extends CellContent {
  cue_id: string;
  column_id: string;
  created_at: Date;
  updated_at: Date;
}

export interface StoredWrite extends CellContent {
  cue_id: string;
  column_id: string;
}

export interface CellRecord {
  cue_id: string;
  column_id: string;
  content: string;
  content_html: string;
  /** Dates as PostgreSQL answered them (the gRPC and event messages carry them as Timestamps). */
  created_at: Date | null;
  updated_at: Date | null;
}
