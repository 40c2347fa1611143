import type { Clients } from '../../edge/clients.js';
import type { RunnerStatusReader } from '../../read-models/runner-status.js';
import { defineRoute, type RouteDef } from '../route.js';
import { adjustDurationBody, countdownRecord, jumpBody, noActionBody, statusRecord } from '../../wire/schemas/runner.js';
import { currentStatus } from '../../read-models/current-status.js';
import { actReply, countdownJson } from '../../wire/records.js';
import { actRequest } from '../../wire/requests.js';

type Verb = 'start' | 'pause' | 'next' | 'previous' | 'end';

const summaries: Record<Verb, string> = {
  start: 'Start the show (pre-show), or resume it where it was paused',
  pause: 'Pause the active cue’s timer',
  next: 'Make the next playable cue active, with a fresh timer',
  previous: 'Make the previous playable cue active, with a fresh timer',
  end: 'End the show (only the admin reset brings it back to pre-show)',
};

const verbErrors: Record<Verb, ('runner.not_running' | 'runner.ended_cannot_start' | 'runner.no_next_cue' | 'runner.no_previous_cue' | 'runner.no_playable_cue')[]> = {
  start: ['runner.ended_cannot_start', 'runner.no_playable_cue'],
  pause: ['runner.not_running'],
  next: ['runner.not_running', 'runner.no_next_cue'],
  previous: ['runner.not_running', 'runner.no_previous_cue'],
  end: ['runner.not_running'],
};

/** The show runner's control surface (the token may come as ?token=). Mapping only. */
export function runnerRoutes(clients: Clients, reader: RunnerStatusReader): RouteDef[] {
  const simple = (verb: Verb) =>
    defineRoute({
      method: 'post',
      path: `/rundowns/{id}/action:${verb}`,
      summary: summaries[verb],
      tag: 'Show control',
      auth: 'control',
      role: 'SHOWCALL',
      body: noActionBody,
      bodyOptional: true,
      errors: ['rundowns.not_found', ...verbErrors[verb]],
      response: statusRecord,
      handler: async ({ params, caller, keyedId }) =>
        actReply(params.id!, await clients.runner.act(actRequest(params.id!, { $case: verb, value: {} }, keyedId('req')), caller)),
    });
  return [
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}/status',
      summary: 'The show’s live status (what every display polls)',
      tag: 'Show control',
      auth: 'control',
      role: 'VIEW',
      errors: ['rundowns.not_found'],
      response: statusRecord,
      handler: async ({ params, principal, caller }) => ({ data: await currentStatus(reader, clients, principal, params.id!, caller) }),
    }),
    defineRoute({
      method: 'get',
      path: '/rundowns/{id}/countdown',
      summary: 'The active cue’s countdown, ready to display',
      tag: 'Show control',
      auth: 'control',
      role: 'VIEW',
      errors: ['rundowns.not_found'],
      response: countdownRecord,
      handler: async ({ params, principal, caller }) => ({ data: countdownJson(await currentStatus(reader, clients, principal, params.id!, caller)) }),
    }),
    simple('start'),
    simple('pause'),
    simple('next'),
    simple('previous'),
    defineRoute({
      method: 'post',
      path: '/rundowns/{id}/action:jump',
      summary: 'Make a cue active, running (from pre-show this starts the show)',
      tag: 'Show control',
      auth: 'control',
      role: 'SHOWCALL',
      body: jumpBody,
      errors: ['rundowns.not_found', 'cues.not_found', 'cues.invalid_cue_type', 'runner.ended_cannot_start'],
      response: statusRecord,
      handler: async ({ params, body, caller, keyedId }) =>
        actReply(params.id!, await clients.runner.act(actRequest(params.id!, { $case: 'jump', value: { cue_id: body.cue_id } }, keyedId('req')), caller)),
    }),
    defineRoute({
      method: 'post',
      path: '/rundowns/{id}/action:adjust-duration',
      summary: 'Change the active cue’s live duration (never below 0); the stored cue is unchanged',
      tag: 'Show control',
      auth: 'control',
      role: 'SHOWCALL',
      body: adjustDurationBody,
      errors: ['rundowns.not_found', 'runner.not_running'],
      response: statusRecord,
      handler: async ({ params, body, caller, keyedId }) =>
        actReply(
          params.id!,
          await clients.runner.act(actRequest(params.id!, { $case: 'adjust_duration', value: { delta_ms: body.delta_ms } }, keyedId('req')), caller),
        ),
    }),
    simple('end'),
  ];
}
