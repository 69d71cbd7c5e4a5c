// Types of the parts of proc.mjs the TypeScript tests use (test/abuse/).
export declare function readMemory(pid: number | 'self'): { rssKb: number; hwmKb: number } | null
export declare function countFds(pid: number): { fds: number; sockets: number }
