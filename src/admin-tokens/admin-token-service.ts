import type { ChangeContext } from '../changes/audit-log.js'
import type { AdminTokenRecord, AdminTokenRepository } from './admin-token-repository.js'
import { type AdminTokenResolver, type AdminTokenSpec, createAdminToken, revokeAdminToken } from './admin-tokens.js'

/**
 * Admin tokens as the admin API and the CLI change them: the functions of admin-tokens.ts (the
 * tree's rules, the audit entries), and this process's token cache told at once of each change;
 * the other processes learn of it from the change log the store writes.
 */
export class AdminTokenService {
  constructor(
    private readonly tokens: AdminTokenRepository,
    private readonly cache: Pick<AdminTokenResolver, 'created' | 'forget'>,
  ) {}

  list(): Promise<AdminTokenRecord[]> {
    return this.tokens.list()
  }

  async create(spec: AdminTokenSpec, audit?: ChangeContext, now?: number): ReturnType<typeof createAdminToken> {
    const made = await createAdminToken(this.tokens, spec, audit, now)
    this.cache.created(made.record.hash)
    return made
  }

  /** See revokeAdminToken: a `not_found` refusal when no token has this id. */
  async revoke(
    id: string,
    audit?: ChangeContext,
    now?: number,
    by?: Pick<AdminTokenRecord, 'id' | 'createdBy'>,
  ): ReturnType<typeof revokeAdminToken> {
    const outcome = await revokeAdminToken(this.tokens, id, audit, now, by)
    for (const { hash } of [outcome.record, ...outcome.alsoRevoked]) this.cache.forget(hash)
    return outcome
  }
}
