/**
 * The order storm the crash tests kill a server in: workers place orders on random animals and
 * cancel or complete acknowledged ones, until a SIGKILL at a random moment in `killAfterMs`; the
 * orders acknowledged (201) before it are what the tests then find again.
 */
import type { ServerProcess } from './process.js'

export type StorePost = (path: string, body?: unknown) => Promise<{ status: number; body: { id: number } }>

/** POST with `auth` to `server`, a JSON body when given. */
export function storePost(server: ServerProcess, auth: Record<string, string>): StorePost {
  return async (path, body) => {
    const res = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: body === undefined ? auth : { ...auth, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    })
    return { status: res.status, body: (await res.json()) as { id: number } }
  }
}

/** `count` available animals, by id. */
export async function stockAnimals(post: StorePost, count: number): Promise<number[]> {
  const pets: number[] = []
  for (let i = 0; i < count; i++) pets.push((await post('/v1/pets', { name: `stock-${i}`, categoryId: 1, status: 'available' })).body.id)
  return pets
}

/** Runs the storm until the server is killed; resolves with the ids of the orders acknowledged. */
export async function orderStormUntilKilled(
  server: ServerProcess,
  post: StorePost,
  pets: readonly number[],
  { workers, killAfterMs }: { workers: number; killAfterMs: readonly [number, number] },
): Promise<Set<number>> {
  const acknowledged = new Set<number>()
  let killed = false
  const timer = setTimeout(
    () => {
      server.child.kill('SIGKILL')
      killed = true
    },
    killAfterMs[0] + Math.random() * (killAfterMs[1] - killAfterMs[0]),
  )
  const worker = async () => {
    while (!killed) {
      try {
        const mine = [...acknowledged]
        if (mine.length > 0 && Math.random() < 0.3) {
          const id = mine[Math.floor(Math.random() * mine.length)]!
          await post(`/v1/store/orders/${id}/${Math.random() < 0.5 ? 'cancel' : 'complete'}`)
        } else {
          const res = await post('/v1/store/orders', { petId: pets[Math.floor(Math.random() * pets.length)]! })
          if (res.status === 201) acknowledged.add(res.body.id)
        }
      } catch {
        return
      }
    }
  }
  await Promise.all(Array.from({ length: workers }, worker))
  clearTimeout(timer)
  return acknowledged
}
