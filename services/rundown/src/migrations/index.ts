import { Rundowns1763800000000 } from './1763800000000-rundowns.js';

export const migrations = [Rundowns1763800000000];
