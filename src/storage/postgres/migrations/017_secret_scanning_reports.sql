-- GitHub's secret scanning reports, by the SHA-256 (hex) of the body's bytes, shared by every
-- instance, so that a copy of a report (GitHub's retry, or a replay) is not acted on twice.
-- received_at: when the report was claimed to be acted on (epoch ms); labels: the answer, one
-- character per token in the report's order (t true_positive, f false_positive), NULL while it is
-- being acted on. No token is stored. Deleted 24 hours after received_at.
CREATE TABLE secret_scanning_reports (
  body_sha256 TEXT   NOT NULL PRIMARY KEY,
  received_at BIGINT NOT NULL,
  labels      TEXT
);
CREATE INDEX secret_scanning_reports_received_at ON secret_scanning_reports (received_at);
