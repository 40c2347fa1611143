import { Rundowns1763800000000 } from './1763800000000-rundowns.js';
import { Content1763960000000 } from './1763960000000-content.js';
import { MentionColor1764000000000 } from './1764000000000-mention-color.js';

export const migrations = [Rundowns1763800000000, Content1763960000000, MentionColor1764000000000];
