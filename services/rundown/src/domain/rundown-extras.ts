import { AppError, limits, looksLikeId, withinChars, type Issue } from '@rundown/shared';
import type { TextVariableInput } from './text-variables.js';
import { duplicatesBy } from './duplicates.js';
import type { MentionValues, OutputMessageValues } from './model.js';

/**
 * What a rundown create may bring besides its columns and cues (an import does): mentions (with the
 * ids the caller rewrote its cells' references to), text variables and the output message.
 */
export interface RundownExtras {
  mentions: MentionValues[];
  text_variables: TextVariableInput[];
  output_message: OutputMessageValues | undefined;
}

const COLOR = /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/**
 * The rules of the mention, variable and message writes, applied to a create: the same caps
 * (answered with the same codes) and the same field limits, reported as issues of the body.
 */
export function checkExtras(extras: RundownExtras, rundownId: string): void {
  if (extras.mentions.length > limits.mentionsPerRundown) {
    throw new AppError('mentions.too_many', { details: { rundown_id: rundownId, max: limits.mentionsPerRundown } });
  }
  if (extras.text_variables.length > limits.textVariablesPerRundown) {
    throw new AppError('text_variables.too_many', {
      detail: `A rundown holds at most ${limits.textVariablesPerRundown} text variables; this would make ${extras.text_variables.length}.`,
      details: { attempted: extras.text_variables.length },
    });
  }
  const issues: Issue[] = [];
  const issue = (path: (string | number)[], message: string) => issues.push({ path, message, code: 'custom' });
  extras.mentions.forEach((m, i) => {
    if (!looksLikeId(m.id)) issue(['mentions', i, 'id'], 'Not a mention id.');
    if (m.name.trim().length === 0 || !withinChars(m.name, limits.mentionNameChars)) issue(['mentions', i, 'name'], `A name is 1 to ${limits.mentionNameChars} characters.`);
    if (!COLOR.test(m.color)) issue(['mentions', i, 'color'], 'must be #rgb or #rrggbb');
    if (!withinChars(m.description, limits.mentionDescriptionChars)) issue(['mentions', i, 'description'], `At most ${limits.mentionDescriptionChars} characters.`);
  });
  for (const { key, indexes } of duplicatesBy(extras.mentions, (m) => m.name)) {
    for (const index of indexes.slice(1)) issue(['mentions', index, 'name'], `Duplicate mention name "${key}" (also at mentions[${indexes[0]}]).`);
  }
  for (const { key, indexes } of duplicatesBy(extras.mentions, (m) => m.id)) {
    for (const index of indexes.slice(1)) issue(['mentions', index, 'id'], `Duplicate mention id "${key}".`);
  }
  extras.text_variables.forEach((v, i) => {
    if (!limits.textVariableKey.test(v.key)) issue(['text_variables', i, 'key'], 'A key is 1 to 64 characters of A-Z, a-z, 0-9 and _.');
    if (!withinChars(v.value, limits.textVariableValueChars)) issue(['text_variables', i, 'value'], `At most ${limits.textVariableValueChars} characters.`);
  });
  for (const { key, indexes } of duplicatesBy(extras.text_variables, (v) => v.key)) {
    for (const index of indexes.slice(1)) issue(['text_variables', index, 'key'], `Duplicate key "${key}" (also at text_variables[${indexes[0]}]).`);
  }
  const message = extras.output_message;
  if (message) {
    if (!withinChars(message.text, limits.outputMessageChars)) issue(['output_message', 'text'], `At most ${limits.outputMessageChars} characters.`);
    if (!COLOR.test(message.color)) issue(['output_message', 'color'], 'must be #rgb or #rrggbb');
  }
  if (issues.length) throw AppError.validation('rundowns.invalid_payload', issues);
}
