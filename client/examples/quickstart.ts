/**
 * Run against a local server (see client/README.md):
 *   ANIMAL_STORE_URL=http://localhost:8080/v1 ANIMAL_STORE_KEY=as_live_... npx tsx client/examples/quickstart.ts
 */
import { AnimalStoreClient, ApiError } from '@animal-store/client'

const client = new AnimalStoreClient({
  baseUrl: process.env.ANIMAL_STORE_URL ?? 'http://localhost:8080/v1',
  apiKey: process.env.ANIMAL_STORE_KEY ?? '',
  retry: { maxRetries: 5, deadlineMs: 30_000 },
})

try {
  // Safe to retry: the client sends an Idempotency-Key and reuses it on every retry.
  const rex = await client.createPet({ name: 'Rex', categoryId: 7, status: 'available' })
  console.log(`created ${rex.name} with id ${rex.id}`)

  // The first page of available animals.
  const page = await client.listPets({ status: 'available', limit: 10 })
  console.log(`first page: ${page.map((pet) => pet.name).join(', ')}`)

  // Every available animal, page after page (Link rel="next").
  let count = 0
  for await (const pet of client.allPets({ status: 'available', limit: 100 })) if (pet.status === 'available') count++
  console.log(`${count} available animals in all`)

  // Buy it: an order holds the animal (pending) until it is completed (sold) or cancelled.
  const order = await client.orders.place(rex.id)
  const sold = await client.orders.complete(order.id)
  const inventory = await client.inventory()
  console.log(`order ${sold.id} ${sold.status}; ${inventory.available} available, ${inventory.sold} sold`)
} catch (error) {
  if (error instanceof ApiError) {
    const retry = error.retryAt ? `; retry at ${error.retryAt.toISOString()}` : ''
    console.error(`${error.status} ${error.code}: ${error.message} (request ${error.requestId}${retry})`)
    process.exitCode = 1
  } else throw error
}
