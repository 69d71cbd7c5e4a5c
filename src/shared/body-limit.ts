/** The largest request body the service reads (Fastify's bodyLimit), and how the messages and the documents write it. */
export const BODY_LIMIT_BYTES = 16 * 1024
export const BODY_LIMIT_TEXT = `${BODY_LIMIT_BYTES / 1024} KiB`
