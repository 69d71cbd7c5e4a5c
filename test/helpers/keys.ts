import type { Environment } from '../../src/config/config.js'
import type { ApiKeyRecord } from '../../src/keys/api-key.js'
import { type CreateKeyInput, newKey } from '../../src/keys/key-service.js'
import type { KeyRepository } from '../../src/keys/repository.js'

/** Stores a new key without an audit entry (a test's setup, not a change anyone made); returns the plain key once. */
export async function createApiKey(
  keys: KeyRepository,
  input: CreateKeyInput,
  env: Environment,
  now = Date.now(),
): Promise<{ key: string; record: ApiKeyRecord }> {
  const created = newKey(input, env, now)
  await keys.insertKey(created.record)
  return created
}
