import fc from 'fast-check'
import { FuzzServer, FuzzStats, runAbuseCase } from './runner.js'
import { abuseCase } from './arbitraries.js'
const server = await FuzzServer.start()
const stats = new FuzzStats()
const cases = fc.sample(abuseCase.map((c) => ({ ...c, client: 7, transport: c.transport === 'raw' ? 'http' as const : c.transport })), { numRuns: 3000, seed: 42 })
const hist: any[] = []
for (const c of cases) {
  hist.push(c)
  try { await runAbuseCase(server, c, stats) } catch (e) {
    const m = (e as Error).message
    if (/Data after|Malformed HTTP request.*\n.*\[http|Cannot set headers|closed after|connection error|no response within/.test(m)) {
      console.log(m)
      for (const h of hist.slice(-1)) console.log(JSON.stringify({ ...h, body: h.body && { ...h.body, text: h.body.text.slice(0, 150) }, extra: h.extra.map(([a,b]:any)=>[a,b.length]) }).slice(0, 1500))
      break
    }
  }
}
await server.close()
