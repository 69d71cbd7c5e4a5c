import { FuzzServer, FuzzStats, PROPERTIES, runProperty } from './runner.js'
const server = await FuzzServer.start()
for (const p of PROPERTIES) {
  const stats = new FuzzStats(); stats.collect = true
  const t0 = Date.now()
  const r = await runProperty(p, server, stats, { numRuns: Number(process.env.N ?? 200) })
  console.log(p.name, r.failed, Date.now() - t0, 'ms')
  console.log(stats.byStatus())
  for (const [k, v] of [...stats.problems].sort((a,b)=>b[1].count-a[1].count)) console.log('\n###', v.count, k, '\n', v.example.slice(0, 700))
  if (process.env.LABELS) console.log([...stats.statuses].sort((a,b)=>b[1]-a[1]))
}
await server.close()
