import type Database from 'better-sqlite3'
import type { ReportClaim, ScanReportRepository } from '../../secret-scanning/repository.js'

/** GitHub's secret scanning reports in SQLite: one process writes, so each call is one synchronous statement or two. */
export class SqliteScanReportRepository implements ScanReportRepository {
  private readonly claim
  private readonly labelsOf
  private readonly answer
  private readonly release
  private readonly deleteBefore

  constructor(db: Database.Database) {
    // A row comes back when the report is this request's: inserted, or an abandoned claim taken over.
    this.claim = db.prepare<[string, number, number]>(
      `INSERT INTO secret_scanning_reports (body_sha256, received_at) VALUES (?, ?)
       ON CONFLICT (body_sha256) DO UPDATE SET received_at = excluded.received_at
        WHERE secret_scanning_reports.labels IS NULL AND secret_scanning_reports.received_at < ?
       RETURNING 1`,
    )
    this.labelsOf = db.prepare<[string], { labels: string | null }>('SELECT labels FROM secret_scanning_reports WHERE body_sha256 = ?')
    this.answer = db.prepare<[string, string]>('UPDATE secret_scanning_reports SET labels = ? WHERE body_sha256 = ?')
    this.release = db.prepare<[string]>('DELETE FROM secret_scanning_reports WHERE body_sha256 = ? AND labels IS NULL')
    this.deleteBefore = db.prepare<[number]>('DELETE FROM secret_scanning_reports WHERE received_at < ?')
  }

  async claimReport(hash: string, now: number, abandonedBefore: number): Promise<ReportClaim> {
    if (this.claim.get(hash, now, abandonedBefore) !== undefined) return { outcome: 'claimed' }
    // Synchronous: no other statement of this process runs in between, and only one process writes the file.
    const labels = this.labelsOf.get(hash)?.labels ?? null
    return labels === null ? { outcome: 'in_flight' } : { outcome: 'answered', labels }
  }

  async answerReport(hash: string, labels: string): Promise<void> {
    this.answer.run(labels, hash)
  }

  async releaseReport(hash: string): Promise<void> {
    this.release.run(hash)
  }

  async deleteReports(before: number): Promise<number> {
    // Only GitHub's signed reports make rows: a day's are few, so one statement.
    return this.deleteBefore.run(before).changes
  }
}
