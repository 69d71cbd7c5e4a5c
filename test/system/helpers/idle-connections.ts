import net from 'node:net'
import type { TestContext } from 'node:test'

export interface IdleConnections {
  /** The connections the far end accepted (and has not closed yet, or closed since). */
  sockets: net.Socket[]
  /** How many of them the far end has closed so far, with those reset before their connect was seen. */
  closed(): number
}

/**
 * `count` idle connections to 127.0.0.1:`port` from the local address `from`, `batch` at a time (a
 * burst over the accept queue would leave some half-open); destroyed when the test ends. For the
 * per-address connection share of the service's listeners and of deploy/haproxy.cfg.
 */
export async function openIdleConnections(
  t: TestContext,
  port: number,
  from: string,
  count: number,
  batch: number,
): Promise<IdleConnections> {
  let closed = 0
  const sockets: net.Socket[] = []
  t.after(() => {
    for (const socket of sockets) socket.destroy()
  })
  for (let opened = 0; opened < count; opened += batch) {
    const accepted = await Promise.all(
      Array.from(
        { length: Math.min(batch, count - opened) },
        () =>
          new Promise<net.Socket | undefined>((resolve, reject) => {
            const socket = net.connect({ port, host: '127.0.0.1', localAddress: from })
            // A connection over the share is closed as soon as it is accepted: on a busy machine
            // its reset can arrive before this side has seen its connect (CI: connect ECONNRESET).
            // It was refused all the same, so it counts as closed.
            const refused = (error: NodeJS.ErrnoException) => {
              if (error.code !== 'ECONNRESET') return reject(error)
              closed++
              resolve(undefined)
            }
            socket.once('error', refused)
            socket.once('connect', () => {
              socket.off('error', refused)
              resolve(socket)
            })
          }),
      ),
    )
    for (const socket of accepted) {
      if (socket === undefined) continue
      sockets.push(socket)
      socket.on('error', () => {}) // a reset: its close is what counts
      socket.once('end', () => socket.destroy())
      socket.once('close', () => closed++)
    }
  }
  return { sockets, closed: () => closed }
}
