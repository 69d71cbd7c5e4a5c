import type { Config } from '../config/config.js'
import type { ApiDescription } from '../http/openapi.js'
import { banPolicy } from '../limits/index.js'
import { banRuleText } from '../limits/policy.js'
import { ERROR_DESCRIPTIONS, ERROR_STATUS, type ErrorCode } from '../shared/errors.js'
import { PLAN_QUOTAS } from '../shared/plans.js'
import { SCOPES } from '../shared/scopes.js'

const plans = () =>
  Object.entries(PLAN_QUOTAS)
    .map(
      ([plan, q]) =>
        `${plan[0]!.toUpperCase()}${plan.slice(1)} ${q.perMinute.toLocaleString('en')}/min and ${q.perDay.toLocaleString('en')}/day`,
    )
    .join(', ')

/**
 * The public API's own words in its OpenAPI document: the introduction (keys, limits with the
 * configured bans, the error table, what was decided where the spec is silent), its tags and its
 * security scheme. The operations come from their routes (one file each: pets/, orders/, rate-limit/).
 */
export function publicApiDescription(config: Config): ApiDescription {
  const errorTable = (Object.keys(ERROR_STATUS) as ErrorCode[])
    .map((c) => `| \`${c}\` | ${ERROR_STATUS[c]} | ${ERROR_DESCRIPTIONS[c]} |`)
    .join('\n')
  return {
    title: 'Animal Store API',
    version: '1.0.0',
    description: [
      'A catalogue of animals, and a store that sells them: an order holds an animal (`pending`) until it is completed (`sold`), cancelled or expires (`available` again). Every operation needs `Authorization: Bearer <API key>`.',
      '',
      "**Getting a key.** The operator of the server creates one with `node dist/cli.js keys create --plan free --name NAME` (in the service's directory); the first start of a server prints one.",
      '',
      // Issue 32: the reference below is folded so that the docs console's Authorize button stays above
      // the fold; Swagger UI (and Redoc) render <details> and the Markdown inside it (blank lines around).
      '<details><summary>Rate limits, errors, and what was decided where the spec is silent</summary>',
      '',
      `**Rate limits.** Each key has a per-minute window (aligned to the clock minute) and a per-day window (the UTC calendar day), from its plan: ${plans()}, Enterprise custom. A request counts in both windows or in neither. Requests without a valid key are limited per client address at the Free rates. Every response carries X-RateLimit-Limit/-Remaining/-Reset for the tightest window, and the IETF draft RateLimit-Policy and RateLimit fields. Over a limit: 429 \`rate_limited\` with Retry-After. ${banRuleText(banPolicy(config))}`,
      '',
      '**Errors.** Every error is `{"code","message","status"}` with one of these codes:',
      '',
      '| code | status | meaning |',
      '|---|---|---|',
      errorTable,
      '',
      '**Additions to the spec** (where it is silent): `after` and the `Link: rel="next"` header for paging; 400 for invalid query or path parameters on every operation; unknown query parameters and body fields are rejected; 405 with Allow, 413, 415, 410 after the sunset; the `Idempotency-Key` header on createPet and placeOrder (IETF draft-ietf-httpapi-idempotency-key-header: replay with `Idempotent-Replayed: true`, 409 while in flight, 422 for another body). The store (`/store/orders`, `/store/inventory`): the spec names its orders, not their rules, which are decided here (see the operations).',
      '',
      '**Decided where the spec is silent.** Integers are written in plain decimal in a body, a query and a path alike (no fraction, exponent, sign other than `-`, leading zeros or `-0`: `1e3`, `1.0`, `005`, `-0` are 400). A name must not be only white space and is stored exactly as sent. A 400 names every problem of the request in its `message` ("3 problems: …"). Links the service builds (`Link`, `Location`) are relative references unless the operator sets a public base URL. Cross-origin browser calls (CORS) are off unless the operator lists origins; credentials are never allowed.',
      '',
      '</details>',
    ].join('\n'),
    tags: [
      { name: 'pets', description: 'The animal catalogue' },
      { name: 'store', description: 'Orders that hold and sell animals, and the inventory' },
      { name: 'rate-limit', description: 'The caller’s own key and rate limits, not counted against them' },
      { name: 'events', description: 'What happened to the caller’s orders, animals and keys, in the order it happened' },
    ],
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description: `API key, as_live_… or as_test_…. A key has scopes (${SCOPES.join(', ')}; all four unless its operator chose fewer); each operation lists the one it needs in its security requirement, and a key without it is refused 403 \`insufficient_scope\` with \`WWW-Authenticate: Bearer error="insufficient_scope", scope="…"\`.`,
      },
    },
  }
}
