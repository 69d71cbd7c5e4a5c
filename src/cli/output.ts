import { escapeControlCharacters } from '../shared/control-characters.js'

/**
 * JSON for stdout, a terminal as often as a pipe: JSON.stringify leaves U+007F–U+009F as they
 * are; escaped, the document means the same.
 */
export const printableJson = (json: unknown): string => `${escapeControlCharacters(JSON.stringify(json))}\n`

/** With --json the JSON (one line), otherwise the text for a person. */
export function print(asJson: boolean | undefined, json: unknown, text: string): void {
  process.stdout.write(asJson ? printableJson(json) : text)
}
