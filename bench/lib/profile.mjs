// Summary of a V8 .cpuprofile (node --cpu-prof): self time per function and per area.

function area(frame, root) {
  const { functionName: fn, url } = frame
  if (fn === '(garbage collector)') return 'GC'
  if (fn === '(idle)') return 'idle'
  if (fn === '(program)' || fn === '(root)') return 'V8/native (program)'
  if (url.includes('/node_modules/')) {
    const rest = url.slice(url.lastIndexOf('/node_modules/') + 14).split('/')
    return `npm:${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`
  }
  if (url.startsWith('node:')) {
    const m = /^node:(?:internal\/)?([a-z_]+)/.exec(url)
    return `node:${m ? m[1] : url.slice(5)}`
  }
  if (url.includes('/dist/')) return 'service (dist/)'
  if (url === '') return fn ? `native: ${fn}` : 'native'
  return url.startsWith(root) ? url.slice(root.length) : url
}

function location(frame, root) {
  const url = frame.url.startsWith('file://') ? frame.url.slice(7) : frame.url
  const short = url.startsWith(root) ? url.slice(root.length) : url
  return short ? `${short}:${frame.lineNumber + 1}` : ''
}

/**
 * `fromUs`/`toUs` (CLOCK_MONOTONIC microseconds, the clock of process.hrtime and of V8's
 * profiler) keep only the samples of the measured round; if that leaves too few, all are used.
 */
export function summariseProfile(profile, { root, fromUs, toUs, top = 20 }) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
  let t = profile.startTime
  const stamps = profile.timeDeltas.map((d) => (t += d))
  let indices = profile.samples.map((_, i) => i)
  if (fromUs !== undefined && toUs !== undefined) {
    const inRound = indices.filter((i) => stamps[i] >= fromUs && stamps[i] <= toUs)
    if (inRound.length >= indices.length * 0.3) indices = inRound
  }
  const selfUs = new Map()
  let totalUs = 0
  for (const i of indices) {
    const dt = (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i]) || 0
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt)
    totalUs += dt
  }
  // Native frames (no script: C++ bindings such as writev, hashing, SQLite) are charged to the
  // nearest JavaScript caller, so that "native" says who called it.
  const parent = new Map()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const SPECIAL = new Set(['(garbage collector)', '(idle)', '(program)', '(root)'])
  const jsCaller = (id) => {
    for (let p = parent.get(id); p !== undefined; p = parent.get(p)) {
      const f = nodes.get(p).callFrame
      if (f.url !== '' && !SPECIAL.has(f.functionName)) {
        // One level more, to tell e.g. which code asked Buffer.byteLength.
        let up = parent.get(p)
        while (up !== undefined && nodes.get(up).callFrame.url === '') up = parent.get(up)
        const next = up === undefined ? null : nodes.get(up).callFrame
        return { frame: f, via: next && next.url !== '' ? `${next.functionName || '(anonymous)'} ${location(next, root)}` : '' }
      }
    }
    return null
  }
  const byFunction = new Map()
  const byArea = new Map()
  for (const [id, us] of selfUs) {
    let frame = nodes.get(id).callFrame
    let name = frame.functionName || '(anonymous)'
    if (frame.url === '' && !SPECIAL.has(frame.functionName)) {
      const caller = jsCaller(id)
      if (caller) {
        // No script URL: a C++ binding or code generated with new Function (fast-json-stringify).
        name = `${frame.functionName || 'native'} [no script] from ${caller.frame.functionName || '(anonymous)'}${caller.via ? ` <- ${caller.via}` : ''}`
        frame = caller.frame
      }
    }
    const loc = location(frame, root)
    const k = `${name} ${loc}`
    const f = byFunction.get(k) ?? { function: name, location: loc, area: area(frame, `file://${root}`), selfUs: 0 }
    f.selfUs += us
    byFunction.set(k, f)
    const a = f.area
    byArea.set(a, (byArea.get(a) ?? 0) + us)
  }
  const pct = (us) => Math.round((us / totalUs) * 1000) / 10
  return {
    samples: indices.length,
    totalMs: Math.round(totalUs / 1000),
    restrictedToRound: indices.length !== profile.samples.length,
    topFunctions: [...byFunction.values()]
      .sort((a, b) => b.selfUs - a.selfUs)
      .slice(0, top)
      .map((f) => ({
        function: f.function,
        location: f.location,
        area: f.area,
        selfMs: Math.round(f.selfUs / 1000),
        selfPct: pct(f.selfUs),
      })),
    byArea: [...byArea.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({ area: name, selfMs: Math.round(us / 1000), selfPct: pct(us) })),
  }
}
