/**
 * The webhook queue's gauges (src/ops/metrics.ts): one read of the store per scrape, and every one
 * of the three shows that read's value in the same scrape (prom-client renders a scrape's metrics
 * at once: the two that did not wait for the read showed the scrape before's).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Metrics } from '../../src/ops/metrics.js'

test('the three webhook queue gauges show one read of the store, in the scrape that made it', async () => {
  const metrics = new Metrics({ defaultMetrics: false })
  let reads = 0
  const now = Date.UTC(2026, 10, 29)
  metrics.webhookQueue = async () => {
    reads++
    await new Promise((resolve) => setTimeout(resolve, 5))
    return { pending: 3 * reads, oldestPendingAt: now - 5_000 * reads, undispatched: 7 * reads, now }
  }
  const scrape = async () => {
    const text = await metrics.registry.metrics()
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1])
    return [
      value('animal_store_webhook_deliveries_pending'),
      value('animal_store_webhook_oldest_pending_seconds'),
      value('animal_store_webhook_events_undispatched'),
    ]
  }
  assert.deepEqual(await scrape(), [3, 5, 7])
  assert.equal(reads, 1, 'one read a scrape')
  assert.deepEqual(await scrape(), [6, 10, 14])
  assert.equal(reads, 2)
})
