import { metadataText, parseMetadata } from './metadata.js'

/*
 * Pure, apart from the API client and Preact (tested in-process by test/console/): the fields of a
 * customer it edits, as the admin API answers them (AdminCustomer of customers-api.ts has them).
 */
export interface EditedCustomer {
  name: string
  plan: string
  perMinute: number
  perDay: number
  metadata: Record<string, unknown> | null
}

/** The customer's edit form as typed. */
export interface CustomerForm {
  name: string
  plan: string
  perMinute: string
  perDay: string
  metadata: string
}

export const customerForm = (c: EditedCustomer): CustomerForm => ({
  name: c.name,
  plan: c.plan,
  perMinute: String(c.perMinute),
  perDay: String(c.perDay),
  metadata: metadataText(c.metadata),
})

/**
 * The PATCH body of the customer's edit form: only the fields that differ (the API takes only
 * those). Limits are the plan's own except on Enterprise, where both are sent when it becomes
 * Enterprise (the API needs them then) and each alone when it changes. Throws when the metadata
 * cannot be read (nothing is sent).
 */
export function customerChanges(c: EditedCustomer, form: CustomerForm): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  if (form.name !== c.name) body.name = form.name
  if (form.plan !== c.plan) body.plan = form.plan
  if (form.plan === 'enterprise') {
    if (form.plan !== c.plan || Number(form.perMinute) !== c.perMinute) body.perMinute = Number(form.perMinute)
    if (form.plan !== c.plan || Number(form.perDay) !== c.perDay) body.perDay = Number(form.perDay)
  }
  const metadata = parseMetadata(form.metadata)
  if (JSON.stringify(metadata) !== JSON.stringify(c.metadata)) body.metadata = metadata
  return body
}
