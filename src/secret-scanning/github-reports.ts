import type { ChangeContext } from '../changes/audit-log.js'
import type { KeyAdministration, LeakReport } from '../keys/administration.js'
import { looksLikeApiKey } from '../keys/api-key.js'
import type { Clock } from '../shared/clock.js'
import { ABANDONED_CLAIM_MS, decodeLabels, encodeLabels, type Label, reportHash } from './reports.js'
import type { ScanReportRepository } from './repository.js'

/** One match GitHub found: the token, the type of ours it matched, where, and in what. */
export interface FoundToken {
  token: string
  type: string
  url: string
  source?: string
}

export interface GithubReportsOptions {
  admin: Pick<KeyAdministration, 'reportLeak'>
  action: LeakReport['action']
  /** The reports acted on already, shared by every instance: a copy is answered, not acted on again. */
  reports: ScanReportRepository
  clock: Clock
}

export type ReportOutcome =
  /** This request acted on the report: each token's label. */
  | { outcome: 'acted'; labels: Label[] }
  /** A copy of a report acted on already: the labels it was answered with, nothing done again. */
  | { outcome: 'copy'; labels: Label[] }
  /** Another request is acting on the same report now: nothing done. */
  | { outcome: 'in_flight' }

const SCANNER: ChangeContext['actor'] = { type: 'secret_scanner', id: 'github' }

/**
 * GitHub's secret scanning partner program: GitHub finds one of our keys in a public repository,
 * gist, issue or npm package and posts it, signed (its signature: github-keys.ts). Each token that
 * is one of our keys is revoked or flagged (SECRET_SCANNING_ACTION), on record as done by
 * `secret_scanner`/`github` with the URL; each is labelled `true_positive` (one of our keys, in any
 * state) or `false_positive`, as GitHub asks. A report is acted on once: a copy of its bytes within
 * a day gets the first answer, from the store (reports.ts), with no audit entry and no action.
 */
export class GithubReports {
  constructor(private readonly options: GithubReportsOptions) {}

  /**
   * Acts on the report whose signed bytes are `body` (`found`, parsed from them), unless it was
   * acted on already or is being acted on. `onUnrecorded` hears of an answer acted on but not
   * recorded as answered (its copies are then acted on again after ABANDONED_CLAIM_MS).
   */
  async receive(
    body: Buffer,
    found: readonly FoundToken[],
    requestId: string,
    onUnrecorded: (error: unknown) => void,
  ): Promise<ReportOutcome> {
    const { reports, clock } = this.options
    const hash = reportHash(body)
    const now = clock.now()
    const claim = await reports.claimReport(hash, now, now - ABANDONED_CLAIM_MS)
    if (claim.outcome === 'in_flight') return claim
    if (claim.outcome === 'answered') return { outcome: 'copy', labels: decodeLabels(claim.labels) }
    let labels: Label[]
    try {
      labels = await this.actOn(found, { actor: SCANNER, requestId })
    } catch (error) {
      // Not acted on in full: its next copy is acted on (a key already revoked stays so).
      await reports.releaseReport(hash).catch(() => {})
      throw error
    }
    // Acted on all the same, so answered: only a copy after ABANDONED_CLAIM_MS is acted on again.
    await reports.answerReport(hash, encodeLabels(labels)).catch(onUnrecorded)
    return { outcome: 'acted', labels }
  }

  /** Revokes or flags each token that is one of our keys; its label. */
  private async actOn(found: readonly FoundToken[], ctx: ChangeContext): Promise<Label[]> {
    const labels: Label[] = []
    for (const { token, url, source } of found) {
      const view = looksLikeApiKey(token)
        ? await this.options.admin.reportLeak(token, { action: this.options.action, url, source: source ?? null }, ctx)
        : undefined
      labels.push(view === undefined ? 'false_positive' : 'true_positive')
    }
    return labels
  }
}
