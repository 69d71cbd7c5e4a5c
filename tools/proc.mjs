// /proc readers: CPU accounting (to void rounds disturbed by other processes), memory sampling, open files.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

/** Clock ticks per second of /proc/stat and /proc/<pid>/stat (USER_HZ; 100 on Linux). */
export const CLK_TCK = 100

/** The aggregate "cpu" line of /proc/stat, in ticks. */
export function readCpuTotals() {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number)
  return { user, nice, system, idle, iowait, irq, softirq, steal: steal ?? 0 }
}

/**
 * utime+stime (all threads) and cutime+cstime (reaped children) of a process, and when it started
 * (ticks since boot), in ticks; null if gone.
 */
export function readProcTimes(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
    return { own: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]), startedAt: Number(f[19]) }
  } catch {
    return null
  }
}

/** VmRSS and VmHWM (peak) of a process in kB; null if gone. */
export function readMemory(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? 0)
    return { rssKb: kb('VmRSS'), hwmKb: kb('VmHWM') }
  } catch {
    return null
  }
}

/** Open file descriptors of a process, and how many of them are sockets. */
export function countFds(pid) {
  let fds = 0
  let sockets = 0
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    fds++
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) sockets++
    } catch {
      // closed meanwhile
    }
  }
  return { fds, sockets }
}

/** Pids whose /proc/<pid>/cmdline (NUL -> space) satisfies a test. */
export function findPids(test) {
  const out = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
      const comm = readFileSync(`/proc/${name}/comm`, 'utf8').trim()
      if (test(cmd, comm)) out.push(Number(name))
    } catch {
      // the process ended meanwhile
    }
  }
  return out
}

/**
 * Kernel threads (no command line): ksoftirqd (our loopback networking's deferred work), kworker
 * (block I/O completion, writeback of our logs and SQLite files), jbd2, rcu. They do the kernel's
 * share of our own load; another job's user-space CPU is still seen as interference.
 */
export const kernelThreads = () => findPids((cmd, comm) => cmd === '' && comm !== '')

/**
 * A CPU accounting window. `groups` maps a label to a function returning pids (evaluated at start);
 * this process (the orchestrator) is always counted, with the children it reaped during the
 * window (wrk, the paced generator), through its cutime/cstime.
 */
/** Ticks since boot, on the clock of a process's start time in /proc/<pid>/stat. */
const uptimeTicks = () => Math.floor(Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * CLK_TCK)

export function startCpuWindow(groups) {
  const pids = {}
  for (const [label, fn] of Object.entries(groups)) pids[label] = [...fn()]
  const startedTicks = uptimeTicks()
  const readGroup = (list) => list.map((pid) => readProcTimes(pid))
  const start = {
    at: process.hrtime.bigint(),
    cpu: readCpuTotals(),
    self: readProcTimes('self'),
    groups: Object.fromEntries(Object.entries(pids).map(([label, list]) => [label, readGroup(list)])),
  }
  return {
    /** Ends the window; returns percentages of ONE core over the window. */
    end() {
      const seconds = Number(process.hrtime.bigint() - start.at) / 1e9
      const cpu = readCpuTotals()
      const self = readProcTimes('self')
      const core = seconds * CLK_TCK // ticks one core can give over the window
      const pct = (ticks) => Math.round((ticks / core) * 10000) / 100
      const byGroup = {}
      let ours = self.own + self.children - start.self.own - start.self.children
      let vanished = 0
      for (const [label, list] of Object.entries(pids)) {
        let ticks = 0
        list.forEach((pid, i) => {
          const a = start.groups[label][i]
          const b = readProcTimes(pid)
          if (a && b) ticks += b.own - a.own
          else if (a && !b) vanished++
        })
        // A group's processes born during the window count whole: a pool that opened a new
        // PostgreSQL connection mid-round (its idle ones closed between rounds) is the benchmark's
        // own work, not interference. A process that started and ended inside the window is lost.
        const known = new Set(list)
        for (const pid of groups[label]()) {
          if (known.has(pid)) continue
          const b = readProcTimes(pid)
          if (b && b.startedAt >= startedTicks) ticks += b.own
        }
        byGroup[label] = pct(ticks)
        ours += ticks
      }
      const busy = cpu.user + cpu.nice + cpu.system - (start.cpu.user + start.cpu.nice + start.cpu.system)
      return {
        seconds: Math.round(seconds * 1000) / 1000,
        totalBusyPct: pct(busy),
        harnessPct: pct(self.own + self.children - start.self.own - start.self.children),
        groupsPct: byGroup,
        /** Busy user+system time of every other process: the interference we refuse. */
        otherPct: pct(Math.max(0, busy - ours)),
        stealPct: pct(cpu.steal - start.cpu.steal),
        irqPct: pct(cpu.irq + cpu.softirq - start.cpu.irq - start.cpu.softirq),
        vanishedProcesses: vanished,
      }
    },
  }
}

/** Samples a process's memory every `everyMs` until stopped; returns the peaks. */
export function sampleMemory(pid, everyMs = 200) {
  let peakRssKb = 0
  let hwmKb = 0
  const take = () => {
    const m = readMemory(pid)
    if (m) {
      peakRssKb = Math.max(peakRssKb, m.rssKb)
      hwmKb = Math.max(hwmKb, m.hwmKb)
    }
  }
  take()
  const timer = setInterval(take, everyMs)
  return {
    stop() {
      clearInterval(timer)
      take()
      return { peakRssMb: Math.round(peakRssKb / 102.4) / 10, hwmMb: Math.round(hwmKb / 102.4) / 10 }
    },
  }
}
