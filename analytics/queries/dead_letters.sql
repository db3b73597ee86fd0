-- Everything that did not become data: dead letters from the dlq topic (joiner, actors...) and records the recorder could not decode, by origin, topic and reason.
-- code is the reason code. origin is 'dlq' for DeadLetter events (counted by event id) and
-- 'recorder' for bad_records (counted by topic, partition and offset).
-- example is the smallest reason text of the group (deterministic).
SELECT origin, topic, component, code, records, example
FROM
(
    SELECT 'dlq' AS origin, source_topic AS topic, component, toString(reason_code) AS code,
           uniqExact(event_id) AS records, min(reason) AS example
    FROM dead_letters
    WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
    GROUP BY source_topic, component, reason_code
    UNION ALL
    SELECT 'recorder', topic, 'recorder', toString(reason_code),
           uniqExact(topic, partition, offset), min(reason)
    FROM bad_records
    WHERE kafka_timestamp >= @since AND kafka_timestamp < @until AND (@run = '' OR run = @run)
    GROUP BY topic, reason_code
)
ORDER BY records DESC, origin, topic, code
