import { api } from '../api.js'
import { ErrorNote, useLoad } from '../components.js'
import { count } from '../format.js'
import { href } from '../router.js'

const DAY_MS = 86_400_000

/** The busiest keys of the last 24 hours, to the end of the current hour (GET /admin/v1/usage/top). */
export function TopKeys() {
  const top = useLoad(async () => {
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000 + 3_600_000
    const { data } = await api.topKeys({
      from: new Date(hour - DAY_MS).toISOString(),
      to: new Date(hour).toISOString(),
      by: 'requests',
      limit: 10,
    })
    return data
  }, [])
  return (
    <section class="top-keys">
      <h2>Busiest keys, last 24 hours</h2>
      <ErrorNote message={top.error} />
      {top.value === undefined ? null : top.value.length === 0 ? (
        <p class="empty">No request in the last 24 hours.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Key</th>
              <th>Plan</th>
              <th class="num">Requests</th>
              <th class="num">Allowed</th>
              <th class="num">Rate-limited</th>
              <th class="num">Banned</th>
            </tr>
          </thead>
          <tbody>
            {top.value.map((k) => (
              <tr data-key-id={k.keyId}>
                <td>
                  <a href={href.key(k.keyId)}>{k.name}</a> <code>{k.keyId}</code>
                </td>
                <td>{k.plan}</td>
                <td class="num">{count(k.requests)}</td>
                <td class="num">{count(k.allowed)}</td>
                <td class="num">{count(k.rateLimited)}</td>
                <td class="num">{count(k.banned)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
