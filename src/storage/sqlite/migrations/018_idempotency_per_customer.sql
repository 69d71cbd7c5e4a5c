-- Idempotency-Key records are scoped per customer, as its quota and its orders are: every key of a
-- customer shares them (idempotencyScope in src/pets/idempotency.ts), so a create or an order
-- retried through another key of the customer replays the first answer. key_id now holds the
-- customer's id for a key of a customer, and the quota id (the first key of its rotation chain)
-- for a key without one, as before: those records do not change.
-- The records written before under the quota of a customer's key move to the customer, so a retry
-- in flight at the upgrade still replays. Where two of its chains have a record under the same
-- Idempotency-Key (each created its own animal or order), the oldest moves; the other stays under
-- its quota id, no longer read, until the sweep deletes it (within 24 hours).
UPDATE idempotency_keys SET key_id = m.customer_id
  FROM (SELECT key_id, idem_key, customer_id
          FROM (SELECT i.key_id, i.idem_key, k.customer_id,
                       ROW_NUMBER() OVER (PARTITION BY k.customer_id, i.idem_key ORDER BY i.created_at, i.key_id) AS n
                  FROM idempotency_keys AS i JOIN api_keys AS k ON k.id = i.key_id
                 WHERE k.customer_id IS NOT NULL AND k.quota_id = k.id
                   AND NOT EXISTS (SELECT 1 FROM idempotency_keys AS e WHERE e.key_id = k.customer_id AND e.idem_key = i.idem_key)) AS ranked
         WHERE n = 1) AS m
 WHERE idempotency_keys.key_id = m.key_id AND idempotency_keys.idem_key = m.idem_key;
