import { UsageError } from './command-errors.js'
import { defineCommand, positiveInt } from './command-line.js'

export const SERVE = defineCommand(
  {
    path: 'serve',
    synopsis: '[--workers N]',
    description: 'Runs the server (as node dist/server.js does), or N of them on one port; N > 1 needs REDIS_URL.',
    flags: { workers: { type: 'string', value: 'N', help: 'processes on one port (node:cluster), 1 to 64; default 1' } },
  },
  ({ values }) => {
    const workers = positiveInt('--workers', values.workers) ?? 1
    if (workers < 1 || workers > 64) throw new UsageError('--workers must be from 1 to 64')
    return async (config, source) => {
      if (workers === 1) {
        const { startServer } = await import('../server.js')
        await startServer(config, source)
        return
      }
      const { startCluster } = await import('../cluster.js')
      await startCluster(config, workers, source)
    }
  },
)
