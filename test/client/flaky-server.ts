/**
 * A scripted HTTP server on 127.0.0.1 for the client's retry tests: each request gets the next
 * step of the script (the last step repeats), and every request is recorded.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import type { Clock } from '../../client/src/index.js'

export type Step =
  /** Close the connection without an answer (after reading the request). */
  | 'drop'
  /** Read the request and never answer. */
  | 'hang'
  | { status: number; body?: unknown; headers?: Record<string, string> }

export interface Received {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

export interface FlakyServer {
  /** http://127.0.0.1:PORT/v1 */
  baseUrl: string
  received: Received[]
  /** Replaces the script and forgets what was received. */
  script(steps: Step[]): void
}

export const apiError = (status: number, code: string, headers: Record<string, string> = {}): Step => ({
  status,
  headers,
  body: { code, message: `scripted ${code}`, status },
})

export const pet = (id: number, name = 'Rex'): Step => ({ status: 201, body: { id, name, categoryId: 1 } })

export async function startFlakyServer(t: TestContext): Promise<FlakyServer> {
  let steps: Step[] = [{ status: 200, body: [] }]
  let index = 0
  const received: Received[] = []
  const hanging = new Set<http.ServerResponse>()
  const server = http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body })
      const step = steps[Math.min(index++, steps.length - 1)]!
      if (step === 'drop') return req.socket.destroy()
      if (step === 'hang') return void hanging.add(res)
      const text = typeof step.body === 'string' ? step.body : JSON.stringify(step.body ?? null)
      res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers })
      res.end(text)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    for (const res of hanging) res.socket?.destroy()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    received,
    script(next) {
      steps = next
      index = 0
      received.length = 0
    },
  }
}

/**
 * Virtual time: sleeps return at once and move the clock on, so a test of minutes of backoff
 * runs in milliseconds. now() also advances with real time (the HTTP round trips).
 */
export class VirtualClock implements Clock {
  private offset = 0
  readonly sleeps: { at: number; ms: number }[] = []

  now(): number {
    return Date.now() + this.offset
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted()
    this.sleeps.push({ at: this.now(), ms })
    this.offset += ms
    await new Promise((resolve) => setImmediate(resolve))
    signal?.throwIfAborted()
  }

  get slept(): number {
    return this.sleeps.reduce((sum, s) => sum + s.ms, 0)
  }
}
