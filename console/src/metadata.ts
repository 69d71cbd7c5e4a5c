import { problem } from './format.js'

/** An owner's metadata as edited (a key's, a customer's): a JSON object, or empty for none (null). Throws with what is wrong. */
export function parseMetadata(text: string): Record<string, unknown> | null {
  if (text.trim() === '') return null
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    throw new Error(`Metadata is not JSON: ${problem(e)}`)
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error('Metadata is a JSON object ({"customer": "c_42"}), or empty for none.')
  return value as Record<string, unknown>
}

/** Metadata as the edit field shows it. */
export const metadataText = (m: Record<string, unknown> | null) => (m === null ? '' : JSON.stringify(m, null, 2))
