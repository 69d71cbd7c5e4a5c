// Types of service-env.mjs for the TypeScript tests (test/system/helpers/process.ts).
export declare const CONFIG_VARS: readonly string[]
export declare function serviceEnv(overrides?: Record<string, string | undefined>, options?: { minimal?: boolean }): NodeJS.ProcessEnv
export declare const REDIS_KEY_PREFIX: string
