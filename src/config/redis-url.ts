import { urlProblem, withoutTrailingSlash } from './schema.js'

export interface RedisNode {
  host: string
  port: number
}

/** What REDIS_URL names: one server, a Redis Cluster (its seed nodes) or a master found through Sentinels. */
export type RedisTarget =
  | { mode: 'single'; url: string }
  | { mode: 'cluster'; nodes: RedisNode[]; tls: boolean; username?: string; password?: string }
  | { mode: 'sentinel'; sentinels: RedisNode[]; masterName: string; tls: boolean; username?: string; password?: string }

const MULTI_NODE_URL = /^(rediss?)\+(cluster|sentinel):\/\/(?:([^@/]*)@)?([^/?#@]+)(?:\/([^?#]*))?$/
const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/

/**
 * REDIS_URL -> what to connect to, or what is wrong with it (the message after "REDIS_URL"):
 * `redis://` or `rediss://` (one server), or `redis+cluster://[user:password@]host:port,host:port,…`
 * (a Redis Cluster, its seed nodes) or `redis+sentinel://[user:password@]host:port,…/master-name`
 * (Sentinels, and the name of the master they watch); `rediss+…` for TLS. The user and password are
 * the Redis servers' (not the Sentinels').
 */
export function parseRedisTarget(raw: string): RedisTarget | string {
  const multi = MULTI_NODE_URL.exec(raw)
  if (multi === null) {
    const problem = urlProblem(raw, ['redis:', 'rediss:'])
    if (problem === undefined) return { mode: 'single', url: withoutTrailingSlash(raw) }
    return `${problem}; a cluster is redis+cluster://host:port,host:port,…, Sentinels redis+sentinel://host:port,…/master-name`
  }
  const [, scheme, mode, userinfo, hostList, path] = multi as unknown as [
    string,
    string,
    'cluster' | 'sentinel',
    string | undefined,
    string,
    string | undefined,
  ]
  const shape = mode === 'cluster' ? 'redis+cluster://host:port,host:port,…' : 'redis+sentinel://host:port,host:port,…/master-name'
  const nodes: RedisNode[] = []
  for (const entry of hostList.split(',')) {
    const hostPort = HOST_PORT.exec(entry.trim())
    const port = Number(hostPort?.[2])
    if (hostPort === null || port < 1 || port > 65535) return `must be ${shape}: ${JSON.stringify(entry)} is not host:port`
    nodes.push({ host: hostPort[1]!.replace(/^\[|\]$/g, ''), port })
  }
  const colon = userinfo?.indexOf(':') ?? -1
  const credentials: { username?: string; password?: string } = {}
  if (userinfo !== undefined && userinfo !== '') {
    const username = decodeURIComponent(colon < 0 ? userinfo : userinfo.slice(0, colon))
    if (username !== '') credentials.username = username
    if (colon >= 0) credentials.password = decodeURIComponent(userinfo.slice(colon + 1))
  }
  const tls = scheme === 'rediss'
  if (mode === 'cluster') {
    if (path !== undefined && path !== '') return `must be ${shape}: a cluster URL has no path (no database number)`
    return { mode, nodes, tls, ...credentials }
  }
  if (path === undefined || !/^[A-Za-z0-9._-]+$/.test(path)) {
    return `must be ${shape}: name the master the Sentinels watch (e.g. /mymaster)`
  }
  return { mode, sentinels: nodes, masterName: path, tls, ...credentials }
}
