/**
 * Scripted stand-ins for a Redis master and a Sentinel that speak just enough RESP2 for ioredis, so a
 * test can hold a reply back or announce a failover at an exact moment (a real Sentinel's timing
 * cannot be steered). Loopback only; each server is closed by the test that made it.
 */
import { once } from 'node:events'
import { createServer, type Server, type Socket } from 'node:net'

type Reply = string | number | null | Reply[]

function encode(reply: Reply): string {
  if (reply === null) return '$-1\r\n'
  if (typeof reply === 'number') return `:${reply}\r\n`
  if (Array.isArray(reply)) return `*${reply.length}\r\n${reply.map(encode).join('')}`
  return `$${Buffer.byteLength(reply)}\r\n${reply}\r\n`
}

/** Splits a buffer of RESP arrays of bulk strings (what clients send) into commands; returns the rest. */
function parseCommands(buffer: string): { commands: string[][]; rest: string } {
  const commands: string[][] = []
  let at = 0
  for (;;) {
    const start = at
    if (buffer[at] !== '*') break
    let end = buffer.indexOf('\r\n', at)
    if (end < 0) break
    const count = Number(buffer.slice(at + 1, end))
    at = end + 2
    const args: string[] = []
    for (let i = 0; i < count; i++) {
      end = buffer.indexOf('\r\n', at)
      if (end < 0 || buffer[at] !== '$') return { commands, rest: buffer.slice(start) }
      const length = Number(buffer.slice(at + 1, end))
      if (buffer.length < end + 2 + length + 2) return { commands, rest: buffer.slice(start) }
      args.push(buffer.slice(end + 2, end + 2 + length))
      at = end + 2 + length + 2
    }
    commands.push(args)
  }
  return { commands, rest: buffer.slice(at) }
}

export interface FakeRedis {
  port: number
  /** Connections open now. */
  sockets: Set<Socket>
  /** Commands received, upper-cased name first. */
  received: string[][]
  close(): Promise<void>
}

/** A server that answers each command with `answer` (a reply, or a promise of one: held back until it settles). */
async function fakeServer(answer: (command: string[], socket: Socket) => Reply | Promise<Reply>): Promise<FakeRedis> {
  const sockets = new Set<Socket>()
  const received: string[][] = []
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    let pending = ''
    let chain = Promise.resolve()
    socket.on('data', (data) => {
      const { commands, rest } = parseCommands(pending + data.toString('utf8'))
      pending = rest
      for (const command of commands) {
        command[0] = command[0]!.toUpperCase()
        received.push(command)
        // Replies go out in order, as Redis sends them, even when one is held back.
        chain = chain.then(async () => {
          const reply = await answer(command, socket)
          if (!socket.destroyed) socket.write(encode(reply))
        })
      }
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as { port: number }).port
  return {
    port,
    sockets,
    received,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** A master: PING, INFO (role:master) and anything else answered "OK". */
export function fakeMaster(): Promise<FakeRedis> {
  return fakeServer(([name]) => {
    if (name === 'PING') return 'PONG'
    if (name === 'INFO') return '# Replication\r\nrole:master\r\nloading:0\r\n'
    return 'OK'
  })
}

export interface FakeSentinel extends FakeRedis {
  /** Where get-master-addr-by-name points. */
  masterPort: number
  /** While set, get-master-addr-by-name is answered only when this promise settles. */
  holdMasterQuery?: Promise<void>
  /** Called when a get-master-addr-by-name arrives (before it is answered). */
  onMasterQuery?: () => void
  /** Publishes +switch-master to the subscribed connections, as a Sentinel does after a failover. */
  announceSwitch(masterName: string, fromPort: number, toPort: number): void
}

/** A Sentinel: SENTINEL get-master-addr-by-name / sentinels, SUBSCRIBE. */
export async function fakeSentinel(masterPort: number): Promise<FakeSentinel> {
  const subscribers = new Set<Socket>()
  const sentinel = (await fakeServer(async ([name, ...args], socket) => {
    if (name === 'SUBSCRIBE') {
      subscribers.add(socket)
      socket.on('close', () => subscribers.delete(socket))
      return ['subscribe', args[0]!, 1]
    }
    if (name === 'SENTINEL' && args[0]?.toLowerCase() === 'get-master-addr-by-name') {
      sentinel.onMasterQuery?.()
      if (sentinel.holdMasterQuery) await sentinel.holdMasterQuery
      return ['127.0.0.1', String(sentinel.masterPort)]
    }
    if (name === 'SENTINEL') return []
    if (name === 'PING') return 'PONG'
    return 'OK'
  })) as FakeSentinel
  sentinel.masterPort = masterPort
  sentinel.announceSwitch = (masterName, fromPort, toPort) => {
    for (const socket of subscribers) {
      socket.write(encode(['message', '+switch-master', `${masterName} 127.0.0.1 ${fromPort} 127.0.0.1 ${toPort}`]))
    }
  }
  return sentinel
}
