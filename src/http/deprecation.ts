/**
 * Deprecation of GET /v1/pets/{petId}: RFC 9745 `Deprecation` (the date it was deprecated, as
 * `@<unix seconds>`), RFC 8594 `Sunset`, and `Link` to the successor and to the documentation.
 * From the sunset on, the operation answers 410 Gone.
 */
export const DEPRECATED_AT = Date.UTC(2026, 0, 1) // the 1.0.0 release deprecates getPet
export const SUNSET_AT = Date.UTC(2030, 11, 5) // 5 December 2030, announced in the spec

export function deprecationHeaders(publicBaseUrl: string): Record<string, string> {
  return {
    deprecation: `@${DEPRECATED_AT / 1000}`,
    sunset: new Date(SUNSET_AT).toUTCString(),
    link: `<${publicBaseUrl}/v1/pets>; rel="successor-version", <${publicBaseUrl}/docs#/pets/getPet>; rel="deprecation"; type="text/html"`,
  }
}
