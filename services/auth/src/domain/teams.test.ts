import { describe, expect, it } from 'vitest';
import { plans } from '@rundown/shared';
import { effectiveLimits } from './teams.js';

describe('a team’s limits in force', () => {
  it('are its plan’s unless overridden', () => {
    expect(effectiveLimits({ plan: 'free', rate_limit_per_minute: null, max_rundowns: null })).toEqual({
      plan: 'free',
      rate_limit_per_minute: plans.free.requestsPerMinute,
      max_rundowns: plans.free.maxRundowns,
    });
  });

  it('take each override on its own', () => {
    expect(effectiveLimits({ plan: 'paid', rate_limit_per_minute: 7, max_rundowns: null })).toEqual({ plan: 'paid', rate_limit_per_minute: 7, max_rundowns: plans.paid.maxRundowns });
    expect(effectiveLimits({ plan: 'paid', rate_limit_per_minute: null, max_rundowns: 0 })).toEqual({ plan: 'paid', rate_limit_per_minute: plans.paid.requestsPerMinute, max_rundowns: 0 });
  });
});
