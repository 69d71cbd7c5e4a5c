// Types of the parts of proc.mjs the TypeScript tests use (test/system/http/, test/system/bench/).
export declare function readMemory(pid: number | 'self'): { rssKb: number; hwmKb: number } | null
export declare function countFds(pid: number): { fds: number; sockets: number }
export declare function startCpuWindow(groups: Record<string, () => number[]>): {
  end(): { seconds: number; groupsPct: Record<string, number>; otherPct: number; stealPct: number; vanishedProcesses: number }
}
