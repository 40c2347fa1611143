import { describe, expect, it } from 'vitest';
import { canSee, couldSee } from './visibility.js';

const rundown = { id: 'rd_1', teamId: 'team_a' };

describe('canSee', () => {
  it('lets a caller of the rundown team see it', () => {
    expect(canSee({ teamId: 'team_a' }, rundown)).toBe(true);
  });

  it('hides the rundown from another team', () => {
    expect(canSee({ teamId: 'team_b' }, rundown)).toBe(false);
  });

  it('hides every rundown from a caller without a team', () => {
    expect(canSee({}, rundown)).toBe(false);
    expect(canSee({ teamId: '' }, { id: 'rd_1', teamId: '' })).toBe(false);
  });

  it('lets a rundown-scoped token see its own rundown only', () => {
    expect(canSee({ teamId: 'team_a', tokenRundownId: 'rd_1' }, rundown)).toBe(true);
    expect(canSee({ teamId: 'team_a', tokenRundownId: 'rd_2' }, rundown)).toBe(false);
  });

  it('does not let a token scoped to a rundown of another team see it through its id', () => {
    expect(canSee({ teamId: 'team_b', tokenRundownId: 'rd_1' }, rundown)).toBe(false);
  });
});

describe('couldSee (before the read)', () => {
  it('refuses what no read could make visible: no team, or another rundown of a scoped token', () => {
    expect(couldSee({}, 'rd_1')).toBe(false);
    expect(couldSee({ teamId: 'team_a', tokenRundownId: 'rd_2' }, 'rd_1')).toBe(false);
  });

  it('leaves the team to the read', () => {
    expect(couldSee({ teamId: 'team_b' }, 'rd_1')).toBe(true);
    expect(couldSee({ teamId: 'team_a', tokenRundownId: 'rd_1' }, 'rd_1')).toBe(true);
  });

});
