/**
 * What the page reads of the v1 API (docs/api-decisions.md#records, #runner, #events, #timing): the fields it uses, as the API sends
 * them. The gateway's unit tests hold these to the API's own response schemas (src/http/viewer.test.ts).
 */

export interface ActiveCue {
  id: string;
  title: string;
  started_at: number;
  paused_at: number | null;
  duration_ms: number;
}

/** §6: the status object (`status` frames). */
export interface Status {
  server_time: number;
  state: 'running' | 'paused' | 'stopped';
  active_cue: ActiveCue | null;
  next_cue: { id: string; title: string } | null;
  phase: 'pre-show' | 'running' | 'ended';
  revision: number;
}

export interface TimingCue {
  id: string;
  state: 'done' | 'active' | 'upcoming';
}

/** §10: the timing object (`timing` frames). */
export interface Timing {
  server_time: number;
  revision: number;
  planned_start: number | null;
  planned_end: number | null;
  projected_end: number | null;
  over_under_ms: number | null;
  cues: TimingCue[];
}

export interface Cue {
  id: string;
  type: 'cue' | 'heading' | 'group';
  title: string;
  subtitle: string;
  duration_ms: number;
  background_color: string | null;
  start_time: number | null;
  scheduled: boolean;
}

export interface Rundown {
  id: string;
  title: string;
  timezone: string | null;
  start_time: number | null;
  settings: { tod_display_format: '12h' | '24h' | null };
}

export interface OutputMessage {
  text: string;
  visible: boolean;
  color: string;
  bold: boolean;
  underline: boolean;
}

/** An RFC 9457 problem document of the API. */
export interface Problem {
  status: number;
  code: string;
  title?: string;
  detail?: string;
}

/** The frames the page subscribes to (§7), by event name. */
export interface Frames {
  ready: { rundown_id: string; server_time: number; resync?: true };
  status: Status;
  timing: Timing;
  rundown: { change: string; id: string; rundown?: Rundown };
  cue: { change: string; id: string; cue?: Cue };
  output_message: { change: string; output_message?: OutputMessage };
  heartbeat: { at: number };
  disconnect: { reason: 'lifetime' | 'token_revoked' | 'token_expired' | 'rundown_removed' };
}

export type FrameName = keyof Frames;
