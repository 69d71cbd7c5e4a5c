// The service's answers captured for the ceiling (which replays them byte for byte), and the peers
// started and checked against them.
import { request, wireSize } from '../../tools/http.mjs'
import { stop } from './children.mjs'
import { PEERS, SERVER_CPU, SQLITE_SCENARIOS } from './scenarios.mjs'
import { startCeiling, startPeer } from './service.mjs'

/** @typedef {import('./rounds.mjs').Bench} Bench */

export async function capture(port, key, sc, ctx) {
  const path = sc.path(ctx)
  const headers = { authorization: `Bearer ${key}` }
  if (sc.body) headers['content-type'] = 'application/json'
  const r = await request(port, { method: sc.method, path, headers, body: sc.body, redirect: 'manual' })
  if (r.status !== sc.expect) throw new Error(`${sc.method} ${path}: expected ${sc.expect}, got ${r.status}: ${r.text.slice(0, 300)}`)
  return { method: sc.method, path, status: r.status, headers: r.rawHeaders, bodyBase64: r.bytes.toString('base64'), raw: r }
}

/** Checks that the ceiling answers each path with the same status, header names and size. */
async function compareWithCeiling(ceilingPort, key, sc, ctx, captured) {
  const c = await capture(ceilingPort, key, sc, ctx)
  const names = (h) =>
    h
      .map(([k]) => k.toLowerCase())
      .filter((k) => k !== 'date')
      .join(',')
  return {
    serviceBytes: wireSize(captured.raw),
    ceilingBytes: wireSize(c.raw),
    sameHeaders: names(captured.headers) === names(c.headers),
    sameBody: captured.bodyBase64 === c.bodyBase64,
  }
}

/**
 * Captures the service's answers to `ids` and starts the ceiling replaying them, checked against them.
 * @param {Bench} bench
 */
export async function captureAndStartCeiling(bench, { service, key, ids, ctx }) {
  const { log, tmp } = bench
  const captured = []
  for (const id of ids) captured.push(await capture(service.port, key, SQLITE_SCENARIOS[id], ctx))
  const captures = captured.map(({ raw, ...c }) => c)
  const ceiling = await startCeiling(captures, tmp, SERVER_CPU)
  const wire = {}
  for (const [i, id] of ids.entries()) {
    wire[id] = await compareWithCeiling(ceiling.port, key, SQLITE_SCENARIOS[id], ctx, captured[i])
    if (!wire[id].sameHeaders || !wire[id].sameBody || Math.abs(wire[id].serviceBytes - wire[id].ceilingBytes) > 2) {
      log(`WARNING: ceiling response for ${id} differs from the service's: ${JSON.stringify(wire[id])}`)
    }
  }
  return { ceiling, wire, captured, captures }
}

/**
 * The peer of a section, checked (recorded in `section.peer`); if it does not start or does not
 * answer as the service does, that is recorded and the section runs without it.
 */
export async function peerOrNothing(bench, section, args) {
  const { log } = bench
  const { script } = PEERS[args.kind]
  try {
    const { peer, wire } = await startCheckedPeer(bench, args)
    section.peer = { kind: args.kind, script, status: 'ok', scenarios: args.ids, wire }
    return peer
  } catch (error) {
    section.peer = { kind: args.kind, script, status: 'failed', reason: error.message }
    log(`${args.kind} peer: FAILED, the scenarios run without it: ${error.message}`)
    return undefined
  }
}

/**
 * Starts the peer of a backend (see bench/peers/) and checks its answers against the service's
 * captured ones: a GET must be the same body byte for byte (both read the same rows); a create the
 * same fields in the same order (its id is another one). Headers may differ for the PG+Redis peer.
 */
async function startCheckedPeer(bench, { kind, key, ids, ctx, captured, captures, databaseUrl }) {
  const { opts, tmp } = bench
  const peer = await startPeer({ kind, cpu: SERVER_CPU, dir: tmp, captures, databaseUrl, redisUrl: opts.redisUrl, key })
  const wire = {}
  try {
    for (const [i, id] of ids.entries()) {
      const sc = SQLITE_SCENARIOS[id]
      const p = await capture(peer.port, key, sc, ctx)
      const fields = (b64) => {
        try {
          return JSON.stringify(Object.keys(JSON.parse(Buffer.from(b64, 'base64').toString())))
        } catch {
          return null
        }
      }
      const names = (h) => h.map(([k]) => k.toLowerCase()).filter((k) => !['date', 'connection', 'keep-alive'].includes(k))
      wire[id] = {
        peerBytes: wireSize(p.raw),
        peerBodyBytes: p.raw.bytes.length,
        serviceBodyBytes: captured[i].raw.bytes.length,
        sameBody: p.bodyBase64 === captured[i].bodyBase64,
        sameFields: fields(p.bodyBase64) === fields(captured[i].bodyBase64),
        sameHeaders: JSON.stringify(names(p.headers).sort()) === JSON.stringify(names(captured[i].headers).sort()),
      }
      if (sc.method === 'GET' ? !wire[id].sameBody : !wire[id].sameFields)
        throw new Error(`the ${kind} peer's answer to ${sc.method} ${p.path} is not the service's: ${JSON.stringify(wire[id])}`)
    }
  } catch (error) {
    await stop(peer.child)
    throw error
  }
  return { peer, wire }
}
