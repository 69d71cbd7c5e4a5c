// The Markdown report (bench/results/<date>.md and the run's printed summary).

const n = (x, digits = 0) =>
  x === null || x === undefined ? '–' : Number(x).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const ms = (x) => (x === null || x === undefined ? '–' : Number(x).toFixed(2))
const ratio = (x) => (x === null || x === undefined ? '–' : Number(x).toFixed(2))
const yes = (b) => (b === null || b === undefined ? '–' : b ? 'yes' : '**NO**')
const fmtSize = (size) => (size >= 1e6 ? `${size / 1e6}M` : size >= 1e3 ? `${size / 1e3}k` : String(size))

function scenarioRows(section) {
  return (section.scenarios ?? []).map((s) => {
    // No valid round: show the void rounds' figures, marked, rather than nothing.
    const m =
      s.summary.validRounds === 0 && s.summary.voidRoundsOnly
        ? { ...s.summary.voidRoundsOnly, validRounds: 0, voidRuns: s.summary.voidRuns }
        : s.summary
    const v = s.summary.validRounds === 0 ? ' (void)' : ''
    return (
      `| ${s.name}${v} | ${section.backend} | ${n(m.rps)} | ${n(m.ceilingRps)} | ${ratio(m.ratio.median)} (${ratio(m.ratio.min)}..${ratio(m.ratio.max)}) ` +
      `| ${ms(m.p50Ms)} | ${ms(m.p99Ms)} | ${ms(m.ceilingP99Ms)} | ${n(m.peakRssMb, 1)} | ${n(m.serverCpuPct)}% / ${n(m.ceilingCpuPct)}% ` +
      `| ${m.validRounds}/${m.roundsAsked}${m.voidRuns ? ` (${m.voidRuns} void)` : ''} | ${m.httpErrors} | ${s.wire ? `${s.wire.serviceBytes}/${s.wire.ceilingBytes}` : '–'} |`
    )
  })
}

const PEER_NAMES = { 'bare-fastify': 'bare Fastify', sqlite: 'Fastify + better-sqlite3', 'pg-redis': 'Fastify + pg + ioredis' }

/** One row per scenario run with a peer: the paired ratio, and what each process paid per request. */
function peerRows(section) {
  return (section.scenarios ?? [])
    .filter((s) => s.summary.peer)
    .map((s) => {
      const m = s.summary.validRounds === 0 && s.summary.voidRoundsOnly ? s.summary.voidRoundsOnly : s.summary
      const p = m.peer
      const v = s.summary.validRounds === 0 ? ' (void)' : ''
      const backing = m.backingCpuUsPerRequest === undefined ? '–' : `${n(m.backingCpuUsPerRequest)} / ${n(p.backingCpuUsPerRequest)}`
      const w = s.wire?.peer
      return (
        `| ${s.name}${v} | ${section.backend} | ${PEER_NAMES[s.peer] ?? s.peer} | ${n(m.rps)} | ${n(p.rps)} ` +
        `| **${ratio(p.ratio.median)}** (${ratio(p.ratio.min)}..${ratio(p.ratio.max)}) | ${n(m.cpuUsPerRequest)} / ${n(p.cpuUsPerRequest)} ` +
        `| ${backing} | ${n(m.serverCpuPct)}% / ${n(p.cpuPct)}% | ${n(m.vmHwmMb, 1)} / ${n(p.vmHwmMb, 1)} | ${ms(m.p99Ms)} / ${ms(p.p99Ms)} ` +
        `| ${s.summary.validRounds}/${s.summary.roundsAsked} | ${p.httpErrors} | ${w ? `${w.serviceBodyBytes}/${w.peerBodyBytes}` : '–'} |`
      )
    })
}

export function markdownReport(r) {
  const L = []
  const m = r.machine
  L.push(`# Animal Store benchmark — ${r.startedAt.slice(0, 10)}${r.quick ? ' (quick smoke run: not a measurement)' : ''}`)
  L.push('')
  if (r.aborted) {
    L.push(`**Partial results: the run was stopped (${r.aborted}).**`)
    L.push('')
  }
  // What the services were started with beyond the defaults (--service-env, --service-node-flags).
  const started = [
    ...Object.entries(r.options.serviceEnv ?? {}).map(([name, value]) => `${name}=${value}`),
    ...(r.options.serviceNodeFlags?.length ? [`node ${r.options.serviceNodeFlags.join(' ')}`] : []),
  ]
  L.push(
    `Machine: ${m.cpuModel}, ${m.cpus} CPUs, ${m.memoryGb} GiB, ${m.kernel}; Node ${m.node}; ${m.wrk}. ` +
      `Commit ${m.gitCommit ?? '?'}${m.gitDirty ? ' (src/ had uncommitted changes)' : ''}. ` +
      `Server, ceiling and peers pinned to CPU ${r.pinning.serverCpu}, load generator to CPU ${r.pinning.loadCpu}. ` +
      `${r.options.rounds} round(s) of ${r.options.duration}s per server, ${r.options.connections} keep-alive connections (wrk -t1), ` +
      `warm-up ${r.options.warmup}s. Service settings: LOG_LEVEL=info to a file, DURABILITY=process unless stated, ` +
      'node flags as `npm start` gives them (the heap bound, MAX_HEAP_MB: `--max-old-space-size=192` by default; the peers run with node’s defaults)' +
      `${started.length ? `; every service started with ${started.join(', ')}` : ''}.`,
  )
  L.push('')
  L.push('## Throughput and latency (wrk, closed loop, saturated)')
  L.push('')
  L.push(
    '| Scenario | Backend | Service req/s | Ceiling req/s | Service/ceiling median (min..max) | p50 ms | p99 ms | Ceiling p99 ms | Peak RSS MB | CPU svc / ceil | Valid rounds | HTTP errors | Bytes/resp svc/ceil |',
  )
  L.push('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
  if (r.sqlite) L.push(...scenarioRows(r.sqlite))
  if (r.pg?.status === 'ok') L.push(...scenarioRows(r.pg))
  L.push('')
  const peers = [...(r.sqlite ? peerRows(r.sqlite) : []), ...(r.pg?.status === 'ok' ? peerRows(r.pg) : [])]
  if (peers.length) {
    L.push('## Service vs peer (same rounds, same wrk settings)')
    L.push('')
    L.push(
      '| Scenario | Backend | Peer | Service req/s | Peer req/s | Service/peer median (min..max) | CPU µs/req svc / peer | PG+Redis CPU µs/req svc / peer | CPU svc / peer | VmHWM MB svc / peer | p99 ms svc / peer | Valid rounds | Peer HTTP errors | Body bytes svc/peer |',
    )
    L.push('|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
    L.push(...peers)
    L.push('')
    L.push(
      'Service/peer = service req/s ÷ peer req/s of the same round, median (min..max) over valid rounds. CPU µs/req = CPU seconds of that server process over its rounds ÷ requests answered (median over rounds); ' +
        "PG+Redis = the same for PostgreSQL's processes (the bench database's backends and the background processes) and Redis during that server's rounds. " +
        "VmHWM = the kernel's peak resident set of the process over its life. The peers are described in docs/performance.md and bench/peers/.",
    )
    L.push('')
  } else if (r.peers === 'not run (--no-peers)') {
    L.push('Peers: not run (--no-peers).', '')
  }
  for (const sec of [r.sqlite, r.pg]) {
    if (sec?.peer?.status === 'failed')
      L.push(`**The ${PEER_NAMES[sec.peer.kind]} peer failed** (${sec.backend} ran without it): ${sec.peer.reason}`, '')
  }
  for (const [name, sec] of [
    ['SQLite scenarios', r.sqlite],
    ['Growth', r.growth],
    ['Order flow', r.orders],
    ['Durability', r.durability],
    ['Profile', r.profile],
  ]) {
    if (sec?.status === 'failed') L.push(`**${name} failed**: ${sec.reason}`, '')
  }
  if (r.sqlite?.catalogue)
    L.push(
      `SQLite catalogue: ${n(r.sqlite.catalogue)} pets, seeded directly with better-sqlite3 after the service's migrations (key created via ${r.keyCreatedVia}).`,
    )
  if (r.pg) {
    L.push(
      r.pg.status === 'ok'
        ? `PostgreSQL + Redis: database ${r.pg.database}; ${r.pg.seededVia}. PostgreSQL and Redis are not pinned (they run wherever the scheduler puts them, also on the load CPU).`
        : `PostgreSQL + Redis: **not run**: ${r.pg.reason}`,
    )
  }
  L.push('')

  const g = r.growth ? { ...r.growth, ratios: r.growth.ratios ?? [] } : null
  if (g?.sizes?.length && g.sizes[0].queries.length) {
    L.push(`## Catalogue growth: list latency at a fixed ${n(g.rate)} req/s (open loop, ${g.seconds}s per point)`)
    L.push('')
    if (g.rerun) L.push(`_Measured in a separate run (${g.rerun.command}, ${g.rerun.startedAt}): ${g.rerun.why}._`, '')
    const sizes = g.sizes.map((s) => fmtSize(s.size))
    L.push(
      `| Query | ${sizes.map((s) => `${s} p50 / p99 ms`).join(' | ')} | ${g.ratios.length ? `${fmtSize(g.ratios[0].to)}/${fmtSize(g.ratios[0].from)} p50 | p99 |` : ''} Ceiling p50 / p99 ms | Server CPU at ${sizes.join(' / ')} | SQLite plan (largest) |`,
    )
    L.push(`|---|${sizes.map(() => '--:').join('|')}|${g.ratios.length ? '--:|--:|' : ''}--:|--:|---|`)
    for (const [i, q] of g.sizes[0].queries.entries()) {
      const cells = g.sizes.map((s) => {
        const x = s.queries[i]
        return x?.valid ? `${ms(x.p50Ms)} / ${ms(x.p99Ms)}` : x ? `void (${ms(x.voidP50Ms)} / ${ms(x.voidP99Ms)})` : '–'
      })
      const rt = g.ratios[i]
      const cpu = g.sizes
        .map((s) =>
          s.queries[i]?.serverCpuPct === null || s.queries[i]?.serverCpuPct === undefined ? '–' : `${n(s.queries[i].serverCpuPct)}%`,
        )
        .join(' / ')
      const last = g.sizes[g.sizes.length - 1].queries[i]
      const f = g.floor?.[q.id]
      const floor = f ? `${ms(f.p50Ms)} / ${ms(f.p99Ms)}${f.void ? ' (void)' : ''}` : '–'
      L.push(
        `| \`${q.id}\` ${'`'}${last?.path ?? q.path}${'`'} | ${cells.join(' | ')} | ${rt ? `${ratio(rt.p50)} | ${ratio(rt.p99)} |` : ''} ${floor} | ${cpu} | ${last?.plan ?? ''} |`,
      )
    }
    L.push('')
    L.push(
      'Latency is measured from handing the request to the socket to the end of the response (client included); "schedule" latency (from when the request was due) is in the JSON. ' +
        '"Ceiling" is the same paced load on the bare node:http server with the same response bytes: the floor this machine and generator give at that rate.',
    )
    if (g.sizes.some((s) => s.peakRssMb !== undefined)) {
      L.push('')
      L.push(
        `Peak RSS of the service at ${sizes.join(' / ')}: ${g.sizes.map((s) => n(s.peakRssMb, 1)).join(' / ')} MB ` +
          `(sampled every 200 ms during the runs; the kernel's VmHWM over each process's life: ${g.sizes.map((s) => n(s.vmHwmMb, 1)).join(' / ')} MB).`,
      )
    }
    L.push('')
  }

  const o = r.orders?.summary
  if (o) {
    L.push('## The order flow (place, then cancel, or complete one in four)')
    L.push('')
    L.push(
      `${r.orders.backend}; ${r.orders.connections} connections in a closed loop (bench/order-flow.mjs), each over animals of its own; ` +
        'a flow is two requests. No ceiling or peer: each request needs the id the one before answered.',
    )
    L.push('')
    L.push('| flows/s | req/s | p50 ms | p99 ms | Service CPU µs/req | Peak RSS MB | Valid rounds | HTTP errors |')
    L.push('|--:|--:|--:|--:|--:|--:|--:|--:|')
    L.push(
      `| ${n(o.flowsPerSecond)} | ${n(o.rps)} | ${ms(o.p50Ms)} | ${ms(o.p99Ms)} | ${n(o.cpuUsPerRequest)} | ${n(o.peakRssMb, 1)} | ` +
        `${o.validRounds}/${r.options.rounds} | ${o.httpErrors} |`,
    )
    L.push('')
  }

  const c = r.cluster
  if (c?.status === 'ok') {
    L.push('## `serve --workers N` with the Redis limiter (scaling)')
    L.push('')
    L.push(`${c.backend}; ${c.pinning}; GET /v1/pets?limit=20, wrk with ${r.options.connections} connections.`)
    L.push('')
    L.push(
      '| Workers | req/s | vs 1 worker | p50 ms | p99 ms | Service CPU (all processes) | Redis CPU | Harness + wrk CPU | Machine busy | Peak RSS per process MB | Valid rounds | HTTP errors |',
    )
    L.push('|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
    for (const x of c.runs) {
      const m = x.summary
      L.push(
        `| ${x.workers} | ${n(m.rps)} | ${ratio(m.vsOneWorker)} | ${ms(m.p50Ms)} | ${ms(m.p99Ms)} | ${n(m.serviceCpuPct)}% | ${n(m.redisCpuPct)}% | ` +
          `${n(m.harnessCpuPct)}% | ${n(m.totalBusyPct)}% | ${n(m.peakRssMbPerProcess, 1)} | ${m.validRounds}/${r.options.rounds} | ${m.httpErrors} |`,
      )
    }
    L.push('')
    L.push('CPU figures are % of one core (200% = both CPUs).')
    L.push('')
  } else if (c) {
    L.push(`\`serve --workers N\` scaling: **${c.status}**${c.reason ? `: ${c.reason}` : ''}`, '')
  }

  const d = r.durability?.summary
  if (d) {
    L.push('## Durability: DURABILITY=power (fsync per commit, group commit)')
    L.push('')
    if (r.durability.rerun) L.push(`_Measured in a separate run (${r.durability.rerun.command}): ${r.durability.rerun.why}._`, '')
    L.push('| Measure | Value |')
    L.push('|---|--:|')
    L.push(`| POST req/s, DURABILITY=power, ${r.options.connections} connections (group commit) | ${n(d.powerGroupedRps)} |`)
    L.push(`| POST p99 ms, same | ${ms(d.powerGroupedP99Ms)} |`)
    L.push(
      `| POST req/s, DURABILITY=power, 1 connection (one fsync per request, no grouping possible) | ${n(d.powerSingleConnectionRps)} |`,
    )
    L.push(
      `| Single-row fsync'd SQLite commits/s on the same disk, no HTTP (one fsync per request, upper bound) | ${n(d.fsyncPerCommitPerSecond)} |`,
    )
    L.push(`| **Group commit vs one fsync per request** (power POST / fsync'd commits) | **${ratio(d.groupedVsFsyncPerRequest)}x** |`)
    L.push(`| Group commit vs 1 connection | ${ratio(d.groupedVsSingleConnection)}x |`)
    L.push(`| POST req/s with DURABILITY=process (main table) | ${n(d.processDurabilityPostRps)} |`)
    L.push(`| power / process | ${ratio(d.powerVsProcess)} |`)
    L.push(`| Valid rounds / HTTP errors | ${d.validRounds} / ${d.httpErrors} |`)
    L.push('')
  }

  const p = r.profile
  if (p) {
    L.push('## CPU profile of the service on GET /v1/pets?limit=20 (node --cpu-prof, one round)')
    L.push('')
    if (p.rerun) L.push(`_Measured in a separate run (${p.rerun.command}, ${p.rerun.startedAt}): ${p.rerun.why}._`, '')
    if (p.status !== 'ok') L.push(`Not run: ${p.reason}`)
    else {
      L.push(
        `${n(p.samples)} samples, ${n(p.totalMs)} ms${p.restrictedToRound ? ' (the measured round only)' : ''}; ${n(p.rpsUnderProfiler)} req/s under the profiler.`,
      )
      if (p.gc) {
        L.push('')
        L.push(
          `GC during the round (--trace-gc): ${p.gc.scavenges} scavenges, ${p.gc.markCompacts} mark-compacts, ${ms(p.gc.pauseMsTotal)} ms of pauses ` +
            `(${p.gc.pausePctOfRound}% of the round, longest ${ms(p.gc.pauseMsMax)} ms); about ${n(p.gc.scavengedKbPerRequest, 1)} KB of young garbage per request.`,
        )
      }
      L.push('')
      L.push('| Area | Self % |')
      L.push('|---|--:|')
      for (const a of p.byArea.slice(0, 12)) L.push(`| ${a.area} | ${a.selfPct} |`)
      L.push('')
      L.push('| Function (top self time) | Where | Self % |')
      L.push('|---|---|--:|')
      for (const f of p.topFunctions.slice(0, 15)) L.push(`| \`${f.function}\` | ${f.location || f.area} | ${f.selfPct} |`)
    }
    L.push('')
  }

  if (r.targets) {
    L.push('## Targets (informative, not asserted)')
    L.push('')
    L.push('| Target | Goal | Measured | Met |')
    L.push('|---|---|--:|---|')
    for (const t of r.targets) L.push(`| ${t.target} | ${t.goal} | ${t.measured === null ? '–' : t.measured} | ${yes(t.met)} |`)
    L.push('')
  }
  L.push(
    'Columns: req/s = median over valid rounds; ratio = service ÷ ceiling of the same round (ceiling = bare node:http serving the identical captured bytes on the same CPU); ' +
      "p50/p99 = median over valid rounds of wrk's exact percentiles; Peak RSS = highest VmRSS sampled every 200 ms during the service rounds; " +
      'CPU svc / ceil = CPU time of the service / the ceiling process over its rounds (100% = one core); a round is void when other processes used more than ' +
      `${r.options.voidThreshold}% of a core (or that much hypervisor steal) meanwhile — it is rerun up to ${r.options.maxRetries} times. See bench/README.md.`,
  )
  return L.join('\n') + '\n'
}

/** The brief's targets, evaluated on the results (reported, never asserted). */
export function computeTargets(results) {
  const sc = (id) => results.sqlite?.scenarios?.find((s) => s.id === id)?.summary
  const list = sc('list20')
  const post = sc('post')
  const sqliteRss = [
    ...(results.sqlite?.scenarios ?? []).map((s) => s.summary.peakRssMb),
    ...(results.growth?.sizes ?? []).flatMap((s) => s.queries.map((q) => q.peakRssMb)),
    results.durability?.summary?.peakRssMb ?? 0,
  ]
  const pgRss = (results.pg?.scenarios ?? []).map((s) => s.summary.peakRssMb)
  const worst = (k) => {
    const xs = (results.growth?.ratios ?? []).map((r) => r[k]).filter((x) => x !== null)
    return xs.length ? Math.max(...xs) : null
  }
  const t = (name, measuredValue, target, ok) => ({
    target: name,
    measured: measuredValue,
    goal: target,
    met: measuredValue === null ? null : ok,
  })
  return [
    t('GET list limit=20: service/ceiling rps (median)', list?.ratio.median ?? null, '>= 0.60', (list?.ratio.median ?? 0) >= 0.6),
    t('GET list limit=20: p99 latency ms (wrk, 50 connections, saturated)', list?.p99Ms ?? null, '< 3', (list?.p99Ms ?? Infinity) < 3),
    t('POST: service/ceiling rps (median)', post?.ratio.median ?? null, '>= 0.40', (post?.ratio.median ?? 0) >= 0.4),
    ...['p50', 'p99'].map((k) =>
      t(
        `list latency at ${results.growth?.ratios?.[0]?.to ?? 'largest'} vs ${results.growth?.ratios?.[0]?.from ?? 'smallest'} pets: worst ${k} ratio over the growth queries`,
        worst(k),
        '<= 1.3',
        (worst(k) ?? Infinity) <= 1.3,
      ),
    ),
    t(
      'peak RSS of the service, MB (max over the SQLite runs)',
      Math.max(0, ...sqliteRss) || null,
      '< 150',
      Math.max(0, ...sqliteRss) < 150,
    ),
    ...(pgRss.length
      ? [t('peak RSS of the service, MB (max over the PostgreSQL + Redis runs)', Math.max(...pgRss), '< 150', Math.max(...pgRss) < 150)]
      : []),
    ...peerTargets(results),
  ]
}

/** The goals against the peers: service ÷ peer, paired per round (only for what ran with a peer); PostgreSQL + Redis ahead of its peer since quota leases. */
function peerTargets(results) {
  const goals = [
    ['sqlite', 'list20', 'SQLite + memory GET list limit=20: service/bare Fastify (paired, median)', 0.85, 'bare-fastify'],
    [
      'sqlite',
      'list20',
      'SQLite + memory GET list limit=20: service/hand-written Fastify + better-sqlite3 (paired, median)',
      1.2,
      'sqlite',
    ],
    ['pg', 'list20', 'PostgreSQL + Redis GET list limit=20: service/peer (paired, median)', 1.0],
    ['pg', 'post', 'PostgreSQL + Redis POST: service/peer (paired, median)', 1.0],
  ]
  const out = []
  for (const [backend, id, target, min, kind] of goals) {
    const peer = results[backend]?.scenarios?.find((s) => s.id === id)?.summary.peer
    if (!peer || (kind !== undefined && results[backend].peer?.kind !== kind)) continue
    const measured = peer.ratio.median
    out.push({ target, measured, goal: `>= ${min.toFixed(2)}`, met: measured === null ? null : measured >= min })
  }
  return out
}
