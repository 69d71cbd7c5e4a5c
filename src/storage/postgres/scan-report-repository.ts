import type { ReportClaim, ScanReportRepository } from '../../secret-scanning/repository.js'
import type { Db } from './connection.js'

/**
 * The claim in one statement. `claimed` is 1 when the INSERT wrote a row (new, or an abandoned
 * claim taken over); otherwise `labels` is the row as the statement's snapshot saw it (a row
 * another instance committed after the statement began, which ON CONFLICT waited for, shows as
 * NULL: in flight, as it was a moment ago).
 */
const CLAIM = `WITH claimed AS (
    INSERT INTO secret_scanning_reports AS r (body_sha256, received_at) VALUES ($1, $2)
    ON CONFLICT (body_sha256) DO UPDATE SET received_at = excluded.received_at
     WHERE r.labels IS NULL AND r.received_at < $3
    RETURNING 1)
  SELECT (SELECT count(*) FROM claimed)::int AS claimed,
         (SELECT labels FROM secret_scanning_reports WHERE body_sha256 = $1) AS labels`

/** GitHub's secret scanning reports in PostgreSQL, shared by every instance. */
export class PostgresScanReportRepository implements ScanReportRepository {
  constructor(private readonly db: Db) {}

  async claimReport(hash: string, now: number, abandonedBefore: number): Promise<ReportClaim> {
    const [row] = await this.db.query<{ claimed: number; labels: string | null }>(CLAIM, [hash, now, abandonedBefore])
    if (row!.claimed === 1) return { outcome: 'claimed' }
    return row!.labels === null ? { outcome: 'in_flight' } : { outcome: 'answered', labels: row!.labels }
  }

  async answerReport(hash: string, labels: string): Promise<void> {
    await this.db.query('UPDATE secret_scanning_reports SET labels = $2 WHERE body_sha256 = $1', [hash, labels])
  }

  async releaseReport(hash: string): Promise<void> {
    await this.db.query('DELETE FROM secret_scanning_reports WHERE body_sha256 = $1 AND labels IS NULL', [hash])
  }

  async deleteReports(before: number): Promise<number> {
    // Only GitHub's signed reports make rows: a day's are few, so one statement.
    const rows = await this.db.query<{ n: number }>(
      'WITH gone AS (DELETE FROM secret_scanning_reports WHERE received_at < $1 RETURNING 1) SELECT count(*)::int AS n FROM gone',
      [before],
    )
    return rows[0]!.n
  }
}
