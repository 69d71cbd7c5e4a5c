/** A configuration an operator must change: the process prints one line naming it and exits with status 2. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

/**
 * A start-up failure an operator can fix: the process prints one line naming the setting, its
 * value and the cause, and exits with status 2 (like a ConfigError).
 */
export class StartupError extends Error {
  constructor(settings: Record<string, string | number>, cause: string) {
    super(
      `${Object.entries(settings)
        .map(([name, value]) => `${name}=${quoted(String(value))}`)
        .join(' ')}: ${cause}`,
    )
    this.name = 'StartupError'
  }
}

/** A value as typed, quoted only when it would not read back as one word. */
function quoted(value: string): string {
  return /^[\w@%+=:,./*-]+$/.test(value) ? value : JSON.stringify(value)
}

/** A URL safe to print or log: its password (in the user part or a query parameter) replaced by `***`. */
export function redactUrl(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    // Several hosts (redis+cluster://u:pw@h1:p1,h2:p2) are no WHATWG URL: hide the password by hand.
    return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/]*:)[^@/]*@/i, '$1***@')
  }
  if (url.password !== '') url.password = '***'
  for (const name of [...url.searchParams.keys()]) if (/pass/i.test(name)) url.searchParams.set(name, '***')
  return url.toString()
}

/** The one line a failed start prints (never a stack): `configuration error: …` or `cannot start: …`. */
export function startFailureLine(error: unknown): string {
  if (error instanceof ConfigError) return `animal-store: configuration error: ${error.message}`
  return `animal-store: cannot start: ${error instanceof Error ? error.message : String(error)}`
}
