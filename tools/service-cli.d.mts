// Types of service-cli.mjs for the TypeScript tests (test/system/helpers/process.ts).
export declare function entryArgs(entry: 'server' | 'cli', options?: { source?: boolean; dist?: string }): string[]
export interface KeyOptions {
  plan?: string
  name?: string
  perMinute?: number
  perDay?: number
}
export interface CreatedKey {
  key: string
  id: string
  plan: string
  prefix: string
  perMinute: number
  perDay: number
}
export declare function createKeyWithCli(
  runCli: (args: string[]) => Promise<{ code: number | null; signal?: string | null; stdout: string; stderr: string }>,
  options?: KeyOptions,
): Promise<CreatedKey>
