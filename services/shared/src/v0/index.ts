export * from './tokens.js';
export * from './rate-limit.js';
export * from './push.js';
