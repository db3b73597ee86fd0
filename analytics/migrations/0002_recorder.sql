-- Tables the recorder writes that are not events.

-- bad_records: every record the recorder could not decode, so that nothing
-- is dropped silently. It has no event id (the bytes did not decode), so it
-- is keyed, and de-duplicated, by where it was read: (topic, partition,
-- offset). The payload is kept verbatim up to 64 KiB (payload_truncated = 1
-- beyond that), with its full size and sha256.
CREATE TABLE IF NOT EXISTS {db}.bad_records (
    topic             String,
    partition         Int32,
    offset            Int64,
    key               String,
    payload           String,
    payload_bytes     UInt32,
    payload_sha256    String,
    payload_truncated UInt8,
    kafka_timestamp   DateTime('UTC'),
    reason            String,
    reason_code       Enum8('unspecified' = 0, 'decode_error' = 1, 'unknown_type' = 2, 'missing_action' = 3, 'join_timeout' = 4, 'stale' = 5, 'schema_invalid' = 6, 'other' = 7),
    message_type      String,
    recorded_at       DateTime('UTC')
) ENGINE = ReplacingMergeTree() PARTITION BY toYYYYMM(kafka_timestamp) ORDER BY (topic, partition, offset);

-- consumer_lag: periodic snapshots (kadm) of every consumer group's
-- committed offset and lag on the catalog's topics. Snapshots are
-- measurements, not events: every one is kept.
CREATE TABLE IF NOT EXISTS {db}.consumer_lag (
    taken_at         DateTime('UTC'),
    taken_at_ns      Int64,
    group_id         String,
    topic            String,
    partition        Int32,
    member_id        String,
    client_id        String,
    committed_offset Int64,
    end_offset       Int64,
    lag              Int64,
    taken_by         String
) ENGINE = MergeTree() PARTITION BY toYYYYMM(taken_at) ORDER BY (group_id, topic, partition, taken_at);
