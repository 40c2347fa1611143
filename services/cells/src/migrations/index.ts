import { Cells1764100000000 } from './1764100000000-cells.js';

export const migrations = [Cells1764100000000];
