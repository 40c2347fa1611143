import { describe, expect, it } from 'vitest';
import { TodDisplayFormat } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import { patchRundownBody } from './schemas/rundowns.js';
import { createCueMessage, patchCueMessage, patchRundownMessage } from './requests.js';

describe('request mappers: JSON merge patch to proto', () => {
  it('a null resets (a reset flag), an absent field keeps (no flag, no value)', () => {
    const reset = patchRundownMessage('rd_1', patchRundownBody.parse({ timezone: null, settings: { cue_numbering: { prefix: null, padding: 3 }, tod_display_format: null } }));
    expect(reset).toMatchObject({ rundown_id: 'rd_1', set_timezone: true, timezone: undefined, set_start_time: false, start_time: undefined });
    expect(reset.settings_patch).toEqual({
      cue_numbering: { start_from: undefined, reset_start_from: false, prefix: undefined, reset_prefix: true, padding: 3, reset_padding: false },
      reset_cue_numbering: false,
      tod_display_format: TodDisplayFormat.TOD_DISPLAY_FORMAT_UNSPECIFIED,
    });
    const kept = patchRundownMessage('rd_1', patchRundownBody.parse({ title: 'T' }));
    expect(kept).toMatchObject({ title: 'T', set_timezone: false, set_start_time: false, settings_patch: undefined });
  });

  it('a cue patch flags the nullable fields it names; a create has no flags', () => {
    expect(patchCueMessage('cue_1', { background_color: null })).toMatchObject({ id: 'cue_1', set_background_color: true, background_color: undefined, set_start_time: false });
    expect(patchCueMessage('cue_1', { title: 'A' })).toMatchObject({ title: 'A', set_background_color: false, set_start_time: false });
    expect(createCueMessage({ title: 'A', position: { after_cue_id: 'cue_0' } })).toMatchObject({
      title: 'A',
      position: { target: { $case: 'after_cue_id', value: 'cue_0' } },
    });
  });
});
