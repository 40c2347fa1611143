/** Roles build on each other: VIEW < SHOWCALL < EDIT < OWNER. */
export const roles = ['VIEW', 'SHOWCALL', 'EDIT', 'OWNER'] as const;
export type RoleName = (typeof roles)[number];

export function isRoleName(value: unknown): value is RoleName {
  return typeof value === 'string' && (roles as readonly string[]).includes(value);
}

export function roleAtLeast(role: RoleName, needed: RoleName): boolean {
  return roles.indexOf(role) >= roles.indexOf(needed);
}
