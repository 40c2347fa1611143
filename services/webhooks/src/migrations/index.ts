import { Webhooks1766000000000 } from './1766000000000-webhooks.js';
import { TimingDigest1766100000000 } from './1766100000000-timing-digest.js';

export const migrations = [Webhooks1766000000000, TimingDigest1766100000000];
