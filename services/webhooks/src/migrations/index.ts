import { Webhooks1766000000000 } from './1766000000000-webhooks.js';

export const migrations = [Webhooks1766000000000];
