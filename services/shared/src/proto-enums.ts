import { Plan, Role } from './generated/rundown/auth/v1/auth.js';
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
