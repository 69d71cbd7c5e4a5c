import type { Config } from '../config/config.js'
import type { ConfigSource } from '../config/config-file.js'
import { UsageError } from './command-errors.js'
import { defineCommand, positiveInt } from './command-line.js'

/** Starts the server, or `workers` of them on one port: the entry point's own start (src/cli.ts). */
export type Serve = (config: Config, source: ConfigSource, workers: number) => Promise<void>

/** `serve [--workers N]`, running `serve` (handed in by src/cli.ts, which owns the server's start). */
export const serveCommand = (serve: Serve) =>
  defineCommand(
    {
      path: 'serve',
      synopsis: '[--workers N]',
      description: 'Runs the server (as node dist/server.js does), or N of them on one port; N > 1 needs REDIS_URL.',
      flags: { workers: { type: 'string', value: 'N', help: 'processes on one port (node:cluster), 1 to 64; default 1' } },
    },
    ({ values }) => {
      const workers = positiveInt('--workers', values.workers) ?? 1
      if (workers < 1 || workers > 64) throw new UsageError('--workers must be from 1 to 64')
      return ({ config, source }) => serve(config, source, workers)
    },
  )
