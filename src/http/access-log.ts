import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'pino'
import type { InfoLineWriter } from '../ops/logger.js'
import type { Metrics } from '../ops/metrics.js'
import { redactKeys } from '../shared/key-redaction.js'
import { clientAddress } from './client-address.js'
import type { Done } from './pipeline.js'
import { settingsOf } from './route-settings.js'

/**
 * `request.log`, made only when something logs through it. Fastify gives every request a child
 * logger, and a pino child serializes its bindings (the request id) when it is made: a cost on
 * every request, while most requests log nothing but their access line, which is written through
 * the parent below with the same fields in the same order.
 */
class RequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options)
    return this.made
  }

  get level(): string {
    return this.logger.level
  }
  set level(level: string) {
    this.logger.level = level
  }
  fatal(...args: unknown[]): void {
    ;(this.logger.fatal as (...a: unknown[]) => void)(...args)
  }
  error(...args: unknown[]): void {
    ;(this.logger.error as (...a: unknown[]) => void)(...args)
  }
  warn(...args: unknown[]): void {
    ;(this.logger.warn as (...a: unknown[]) => void)(...args)
  }
  info(...args: unknown[]): void {
    ;(this.logger.info as (...a: unknown[]) => void)(...args)
  }
  debug(...args: unknown[]): void {
    ;(this.logger.debug as (...a: unknown[]) => void)(...args)
  }
  trace(...args: unknown[]): void {
    ;(this.logger.trace as (...a: unknown[]) => void)(...args)
  }
  silent(...args: unknown[]): void {
    ;(this.logger.silent as (...a: unknown[]) => void)(...args)
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options)
  }
}

/** Who presented a credential, as the access line names it: a key id or an admin token id. */
export type PresentedCredential = { keyId: string } | { adminTokenId: string }

/** The field naming the request id in log lines (Fastify's requestIdLogLabel), as the access line writes it. */
export const REQUEST_ID_LABEL = 'reqId'

/** Fastify's `childLoggerFactory`: see RequestLogger. */
export function lazyRequestLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new RequestLogger(parent, bindings, options)
}

/**
 * The onResponse hook: request metrics and the one access-log line per request, with the client's
 * address as the rate limiter sees it (clientAddress: TRUST_PROXY applied, one spelling per
 * address), and the id of the key or admin token presented whenever storage knew it, whatever the
 * status (a 401 for an expired or revoked key, a 429 included). The line goes
 * through `log` (the app's logger) with the request id first, exactly as the request's child
 * logger would write it, without making that child (see RequestLogger); built here and written
 * by `writeLine` when the logger given to the app offers one (see ops/logger.ts: Fastify wraps that
 * logger in a child of its own, which writes the same line), else through pino's info().
 */
export function accessLog(
  log: FastifyBaseLogger,
  metrics: Metrics,
  writeLine: InfoLineWriter | undefined,
  /** The key or admin token presented, when storage knew it (the guard's admission: auth/admission.ts). */
  presented: (request: FastifyRequest) => PresentedCredential | undefined,
) {
  return (request: FastifyRequest, reply: FastifyReply, done: Done): void => {
    const status = reply.statusCode
    const ms = reply.elapsedTime
    metrics.observeRequest(request.method, settingsOf(request).url ?? 'unmatched', status, ms / 1000)
    const url = redactKeys(request.url)
    const rounded = Math.round(ms * 100) / 100
    const ip = clientAddress(request)
    const who = presented(request)
    const keyId = who !== undefined && 'keyId' in who ? who.keyId : undefined
    const adminTokenId = who !== undefined && 'adminTokenId' in who ? who.adminTokenId : undefined
    if (writeLine !== undefined) {
      // The fields in the order of the object below; undefined ones left out, as pino does.
      writeLine(
        `"${REQUEST_ID_LABEL}":${JSON.stringify(request.id)},"method":${JSON.stringify(request.method)},"url":${JSON.stringify(url)},` +
          `"status":${status},"ms":${rounded},"ip":${JSON.stringify(ip)}${keyId === undefined ? '' : `,"keyId":${JSON.stringify(keyId)}`}` +
          `${adminTokenId === undefined ? '' : `,"adminTokenId":${JSON.stringify(adminTokenId)}`}`,
        REQUEST_MESSAGE,
      )
    } else {
      log.info({ reqId: request.id, method: request.method, url, status, ms: rounded, ip, keyId, adminTokenId }, 'request')
    }
    done()
  }
}

const REQUEST_MESSAGE = JSON.stringify('request')
