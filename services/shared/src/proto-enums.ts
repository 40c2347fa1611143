import { Plan, Role } from './generated/rundown/auth/v1/auth.js';
import { ColumnType } from './generated/rundown/rundown/v1/columns.js';
import { CueType, SkippedBy } from './generated/rundown/rundown/v1/cues.js';
import { RundownStatus, TodDisplayFormat } from './generated/rundown/rundown/v1/rundown.js';
import { CueTimingState, Phase, PlayEnd } from './generated/rundown/runner/v1/runner.js';
import { DeliveryState } from './generated/rundown/webhooks/v1/webhooks.js';
import type { PlanName } from './limits.js';
import type { RoleName } from './roles.js';

/** Role and plan names ↔ their proto enums, for every service that speaks rundown.auth.v1. */
export const roleToProto: Record<RoleName, Role> = {
  VIEW: Role.ROLE_VIEW,
  SHOWCALL: Role.ROLE_SHOWCALL,
  EDIT: Role.ROLE_EDIT,
  OWNER: Role.ROLE_OWNER,
};

export function roleFromProto(role: Role): RoleName | undefined {
  return (Object.keys(roleToProto) as RoleName[]).find((name) => roleToProto[name] === role);
}

export const planToProto: Record<PlanName, Plan> = { free: Plan.PLAN_FREE, paid: Plan.PLAN_PAID };

export function planFromProto(plan: Plan): PlanName | undefined {
  return plan === Plan.PLAN_PAID ? 'paid' : plan === Plan.PLAN_FREE ? 'free' : undefined;
}

/**
 * A proto enum and the names the domain and the JSON API use for it, both ways. One table per enum
 * (below), shared by the service that maps its domain values and the gateway that maps JSON.
 */
export interface EnumNames<Name extends string, Value extends number> {
  /** Every name, in the proto's order (a non-empty tuple, as z.enum takes it). */
  readonly names: readonly [Name, ...Name[]];
  toProto(name: Name): Value;
  /** undefined for UNSPECIFIED or a value this build does not know. */
  fromProto(value: number): Name | undefined;
}

export function enumNames<Name extends string, Value extends number>(table: Record<Name, Value>): EnumNames<Name, Value> {
  const names = Object.keys(table) as unknown as [Name, ...Name[]];
  const byValue = new Map<number, Name>(names.map((name) => [table[name], name]));
  return { names, toProto: (name) => table[name], fromProto: (value) => byValue.get(value) };
}

export const cueTypeNames = enumNames({ cue: CueType.CUE_TYPE_CUE, heading: CueType.CUE_TYPE_HEADING, group: CueType.CUE_TYPE_GROUP });

/** `null` (not skipped) is SKIPPED_BY_UNSPECIFIED. */
export const skippedByNames = enumNames({ self: SkippedBy.SKIPPED_BY_SELF, group: SkippedBy.SKIPPED_BY_GROUP });

export const columnTypeNames = enumNames({
  text: ColumnType.COLUMN_TYPE_TEXT,
  select: ColumnType.COLUMN_TYPE_SELECT,
  image: ColumnType.COLUMN_TYPE_IMAGE,
  attachment: ColumnType.COLUMN_TYPE_ATTACHMENT,
});

export const rundownStatusNames = enumNames({
  imported: RundownStatus.RUNDOWN_STATUS_IMPORTED,
  draft: RundownStatus.RUNDOWN_STATUS_DRAFT,
  'awaiting-data': RundownStatus.RUNDOWN_STATUS_AWAITING_DATA,
  approved: RundownStatus.RUNDOWN_STATUS_APPROVED,
  finalized: RundownStatus.RUNDOWN_STATUS_FINALIZED,
  rejected: RundownStatus.RUNDOWN_STATUS_REJECTED,
});

/** `null` (no preference) is TOD_DISPLAY_FORMAT_UNSPECIFIED. */
export const todDisplayFormatNames = enumNames({ '12h': TodDisplayFormat.TOD_DISPLAY_FORMAT_12H, '24h': TodDisplayFormat.TOD_DISPLAY_FORMAT_24H });

export const runnerPhaseNames = enumNames({ 'pre-show': Phase.PHASE_PRE_SHOW, running: Phase.PHASE_RUNNING, ended: Phase.PHASE_ENDED });

/** Timing (docs/api-decisions.md#timing): a cue's place in the show, and how a play of a cue ended (`null`: still playing, or never played). */
export const cueTimingStateNames = enumNames({
  done: CueTimingState.CUE_TIMING_STATE_DONE,
  active: CueTimingState.CUE_TIMING_STATE_ACTIVE,
  upcoming: CueTimingState.CUE_TIMING_STATE_UPCOMING,
});

export const playEndNames = enumNames({
  next: PlayEnd.PLAY_END_NEXT,
  previous: PlayEnd.PLAY_END_PREVIOUS,
  jump: PlayEnd.PLAY_END_JUMP,
  auto_advance: PlayEnd.PLAY_END_AUTO_ADVANCE,
  scheduled: PlayEnd.PLAY_END_SCHEDULED,
  end: PlayEnd.PLAY_END_END,
  reset: PlayEnd.PLAY_END_RESET,
});

export const deliveryStateNames = enumNames({
  pending: DeliveryState.DELIVERY_STATE_PENDING,
  delivered: DeliveryState.DELIVERY_STATE_DELIVERED,
  failed: DeliveryState.DELIVERY_STATE_FAILED,
});
