import { randomBytes } from 'node:crypto'

/**
 * An endpoint's signing secret in the Standard Webhooks form: `whsec_` and the base64 of 32 random
 * bytes (the specification asks for at least 24; HMAC-SHA256 gains nothing from more than 32).
 * Receivers pass it as it is to the `standardwebhooks` package (`new Webhook(secret)`), which takes
 * the prefix off and decodes the rest. Kept as it is, since signing needs it (SECURITY.md).
 */
export const WEBHOOK_SECRET_PREFIX = 'whsec_'
const SECRET_BYTES = 32

export const newWebhookSecret = (): string => WEBHOOK_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64')

/** How long a rotated secret keeps signing beside the new one by default (24 h, as Svix's), and at most (7 days). */
export const DEFAULT_PREVIOUS_SECRET_SECONDS = 86_400
export const MAX_PREVIOUS_SECRET_SECONDS = 604_800

/** What signs a delivery made at `now`: the secret, and the previous one until it expires (one signature each). */
export function signingSecrets(
  endpoint: { secret: string; previousSecret: string | null; previousSecretExpiresAt: number | null },
  now: number,
): string[] {
  const { secret, previousSecret, previousSecretExpiresAt } = endpoint
  return previousSecret !== null && previousSecretExpiresAt !== null && previousSecretExpiresAt > now ? [secret, previousSecret] : [secret]
}
