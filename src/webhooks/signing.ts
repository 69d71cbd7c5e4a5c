import { Webhook } from 'standardwebhooks'
import type { DeliveryClaim } from './delivery.js'
import { signingSecrets } from './secret.js'

/**
 * A delivery's request as Standard Webhooks has it: the body `{"type","timestamp","data"}` and the
 * headers `webhook-id` (the event's id: the same on every attempt, so a receiver drops a repeat),
 * `webhook-timestamp` (this attempt's time, in seconds) and `webhook-signature` (`v1,` and the
 * base64 HMAC-SHA256 of `id.timestamp.body`), signed by the standardwebhooks package itself, once
 * per secret that signs now: during a rotation the previous secret's signature follows the new
 * one's, space-separated, and a receiver holding either verifies it.
 */

/**
 * The body, as JSON text: the event's `data` is spliced in as it was written (events/payload.ts),
 * never parsed and written again, so an int64 field above 2^53 arrives exact.
 */
export function webhookBody(event: DeliveryClaim['event']): string {
  return `{"type":${JSON.stringify(event.type)},"timestamp":${JSON.stringify(new Date(event.occurredAt).toISOString())},"data":${event.data}}`
}

/** The headers of an attempt made at `now` (ms) with `body`. */
export function webhookHeaders(claim: Pick<DeliveryClaim, 'endpoint' | 'event'>, body: string, now: number): Record<string, string> {
  const at = new Date(now)
  const signatures = signingSecrets(claim.endpoint, now).map((secret) => new Webhook(secret).sign(claim.event.id, at, body))
  return {
    'content-type': 'application/json',
    'webhook-id': claim.event.id,
    'webhook-timestamp': String(Math.floor(now / 1000)),
    'webhook-signature': signatures.join(' '),
  }
}
