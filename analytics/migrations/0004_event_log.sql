-- event_log: the raw bytes of every record of the joiner's input topics
-- (obs, actions, rewards), decodable or not, keyed and de-duplicated by
-- where it was read (topic, partition, offset). It is the history beyond
-- Kafka's retention: `asyncwebrl replay join --source clickhouse` feeds it
-- to the joiner's state machine in each topic-partition's offset order and
-- rebuilds exactly the transitions a replay from Kafka would.
-- kafka_timestamp_ns keeps the broker timestamp at full precision: the join
-- falls back to it for events without a producer time.
CREATE TABLE IF NOT EXISTS {db}.event_log (
    topic              String,
    partition          Int32,
    offset             Int64,
    key                String,
    value              String,
    kafka_timestamp    DateTime('UTC'),
    kafka_timestamp_ns Int64,
    recorded_at        DateTime('UTC')
) ENGINE = ReplacingMergeTree() PARTITION BY toYYYYMM(kafka_timestamp) ORDER BY (topic, partition, offset);
