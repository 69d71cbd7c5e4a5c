-- Idempotency-Key records are scoped per customer: the API key's quota, shared along its rotation
-- chain (idempotencyScope in src/pets/idempotency.ts), so that a retry sent with the successor of a
-- rotated key replays the first answer instead of creating a second animal. key_id now holds the
-- quota id (the id of the first key of the chain; a key never rotated is its own quota).
-- The records written before were per key: those of a successor move to its quota id. Where the
-- chain already had a record under the same Idempotency-Key (each key created its own animal), the
-- quota's own record is kept, else the oldest; the other stays under its key id, no longer read,
-- until the sweep deletes it (within 24 hours).
UPDATE idempotency_keys SET key_id = m.quota_id
  FROM (SELECT key_id, idem_key, quota_id
          FROM (SELECT i.key_id, i.idem_key, k.quota_id,
                       ROW_NUMBER() OVER (PARTITION BY k.quota_id, i.idem_key ORDER BY i.created_at, i.key_id) AS n
                  FROM idempotency_keys AS i JOIN api_keys AS k ON k.id = i.key_id
                 WHERE k.quota_id <> k.id
                   AND NOT EXISTS (SELECT 1 FROM idempotency_keys AS e WHERE e.key_id = k.quota_id AND e.idem_key = i.idem_key)) AS ranked
         WHERE n = 1) AS m
 WHERE idempotency_keys.key_id = m.key_id AND idempotency_keys.idem_key = m.idem_key;
