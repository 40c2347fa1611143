export * from './tokens.js';
export * from './rate-limit.js';
