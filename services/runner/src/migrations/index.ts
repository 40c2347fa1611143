import { Shows1764100000000 } from './1764100000000-shows.js';

export const migrations = [Shows1764100000000];
