// Types of http.mjs for the TypeScript tests (test/system/helpers/, test/helpers/).
export declare function freePort(host?: string): Promise<number>
export declare const bearer: (key: string) => Record<string, string>
export interface Answer {
  status: number
  /** The headers, for reading. */
  headers: Headers
  /** The headers as sent: every line, its order and case kept. */
  rawHeaders: Array<[string, string]>
  bytes: Buffer
  text: string
  /** Parsed when it is JSON, else the text. */
  body: unknown
}
export declare function request(
  target: string | number,
  init?: {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: unknown
    timeoutMs?: number
    redirect?: 'follow' | 'manual'
  },
): Promise<Answer>
export declare function waitHealthy(
  port: number,
  child: { exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>; readonly err: string; readonly out: string },
  options?: { timeoutMs?: number; path?: string; outputLines?: number },
): Promise<void>
export declare function wireSize(captured: Answer): number
