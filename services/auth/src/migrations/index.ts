import { TeamsAndTokens1763800000000 } from './1763800000000-teams-and-tokens.js';

export const migrations = [TeamsAndTokens1763800000000];
