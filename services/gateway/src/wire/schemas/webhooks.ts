import { z } from 'zod';
import { limits } from '@rundown/shared/core';
import { idRef, pageQuery, single, UNSTATED_RULE } from './common.js';

/** What an endpoint may subscribe to (§11): §7's names plus status and timing, or "*". */
export const WEBHOOK_EVENT_NAMES = ['rundown', 'cue', 'column', 'cell', 'mention', 'text_variable', 'output_message', 'status', 'timing'] as const;

const url = z
  .string()
  .min(1)
  .max(limits.webhookUrlChars)
  .meta({
    [UNSTATED_RULE]:
      'An absolute https URL (plain http only for hosts the deployment allows) whose host resolves to public addresses only: no loopback, private, link-local or metadata target (docs/api-decisions.md#webhooks).',
  });
const events = z
  .array(z.enum([...WEBHOOK_EVENT_NAMES, '*']))
  .min(1)
  .max(WEBHOOK_EVENT_NAMES.length + 1);
const description = z.string().max(limits.webhookDescriptionChars);

export const createWebhookBody = z
  .strictObject({ url, events, rundown_id: idRef.nullable().optional(), description: description.optional(), enabled: z.boolean().optional() })
  .meta({ examples: [{ url: 'https://example.com/hooks/rundown', events: ['cue', 'status', 'timing'], description: 'Graphics engine' }] });

export const patchWebhookBody = z
  .strictObject({ url: url.optional(), events: events.optional(), rundown_id: idRef.nullable().optional(), description: description.nullable().optional(), enabled: z.boolean().optional() })
  .meta({ examples: [{ enabled: true }, { events: ['*'], rundown_id: null }] });

export const webhookRecord = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  rundown_id: z.string().nullable(),
  description: z.string(),
  enabled: z.boolean(),
  disabled_reason: z.string().nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

export const webhookWithSecret = webhookRecord.extend({ secret: z.string().meta({ description: '`whsec_` + base64 of 32 random bytes; answered only here and on rotation' }) });

export const deliveryStates = ['pending', 'delivered', 'failed'] as const;

export const deliveriesQuery = pageQuery.extend({ state: single(z.enum(deliveryStates)).optional() });

export const attemptRecord = z.object({
  at: z.iso.datetime(),
  status: z.number().int().nullable(),
  error: z.string().nullable(),
  response_ms: z.number().int(),
});

export const deliveryRecord = z.object({
  id: z.string().meta({ description: 'The `webhook-id` header, the same on every attempt' }),
  event_id: z.string(),
  type: z.string(),
  state: z.enum(deliveryStates),
  attempts: z.number().int(),
  last_status: z.number().int().nullable(),
  last_error: z.string().nullable(),
  last_response_ms: z.number().int().nullable(),
  next_attempt_at: z.iso.datetime().nullable(),
  created_at: z.iso.datetime(),
  delivered_at: z.iso.datetime().nullable(),
});

export const deliveryWithAttempts = deliveryRecord.extend({ attempt_log: z.array(attemptRecord) });
