import { describe, expect, it } from 'vitest';
import { parseOptions, PARTS } from './options.js';

describe('parseOptions', () => {
  it('takes the token from the fragment, and shows everything by default', () => {
    const options = parseOptions('', '#token=eyJ.a.b');
    expect(options).toMatchObject({ token: 'eyJ.a.b', tokenInQuery: false, theme: 'dark', mirror: 'none', clock: null, warnings: [] });
    expect([...options.parts]).toEqual([...PARTS]);
  });

  it('refuses a token in the query (it would reach the server logs) and says why', () => {
    const options = parseOptions('?token=eyJ.a.b', '');
    expect(options.token).toBeNull();
    expect(options.tokenInQuery).toBe(true);
    expect(options.warnings.join()).toMatch(/fragment/);
  });

  it('shows only the parts named by show=, less those named by hide=', () => {
    expect([...parseOptions('', '#token=t&show=countdown').parts]).toEqual(['countdown']);
    expect([...parseOptions('?show=countdown,clock,message', '#hide=clock').parts]).toEqual(['countdown', 'message']);
    const hidden = parseOptions('', '#hide=over-under,next');
    expect(hidden.parts.has('over-under')).toBe(false);
    expect(hidden.parts.has('next')).toBe(false);
    expect(hidden.parts.has('countdown')).toBe(true);
  });

  it('reads options from the query or the fragment; the fragment wins', () => {
    expect(parseOptions('?theme=light', '').theme).toBe('light');
    expect(parseOptions('?theme=light', '#theme=dark').theme).toBe('dark');
    expect(parseOptions('?clock=12h', '').clock).toBe('12h');
    expect(parseOptions('', '#clock=24h').clock).toBe('24h');
  });

  it('mirrors horizontally for a teleprompter glass, vertically or both when asked', () => {
    expect(parseOptions('', '#mirror').mirror).toBe('horizontal');
    expect(parseOptions('', '#mirror=1').mirror).toBe('horizontal');
    expect(parseOptions('?mirror=true', '').mirror).toBe('horizontal');
    expect(parseOptions('', '#mirror=vertical').mirror).toBe('vertical');
    expect(parseOptions('', '#mirror=both').mirror).toBe('both');
    expect(parseOptions('', '#mirror=0').mirror).toBe('none');
  });

  it('keeps the defaults for what it does not understand, and lists it', () => {
    const options = parseOptions('', '#theme=purple&mirror=sideways&clock=13h&show=countdown,bogus');
    expect(options).toMatchObject({ theme: 'dark', mirror: 'none', clock: null });
    expect([...options.parts]).toEqual(['countdown']);
    expect(options.warnings).toHaveLength(4);
  });
});
