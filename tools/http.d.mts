// Types of the parts of http.mjs the TypeScript tests use (test/helpers/).
export declare function freePort(host?: string): Promise<number>
export declare const bearer: (key: string) => Record<string, string>
export declare function waitHealthy(
  port: number,
  child: { exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>; readonly err: string; readonly out: string },
  options?: { timeoutMs?: number; path?: string; outputLines?: number },
): Promise<void>
