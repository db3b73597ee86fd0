-- Stored rows and distinct events per raw table, for events produced in the window.
-- rows counts every stored copy; events counts each event id once (exact,
-- whatever the merges); duplicates = rows - events are re-deliveries that
-- ReplacingMergeTree has not merged away yet. bad_records counts
-- undecodable records by (topic, partition, offset) and uses the Kafka
-- timestamp as its time.
SELECT table_name, rows, events, rows - events AS duplicates
FROM
(
    SELECT arrayJoin(['tasks', 'obs', 'actions', 'rewards', 'telemetry', 'transitions', 'episodes', 'weights', 'dead_letters', 'bad_records']) AS table_name
)
ANY LEFT JOIN
(
    -- The event tables (those above less bad_records) through one merge():
    -- _table names the table a row comes from.
    SELECT _table AS table_name, count() AS rows, uniqExact(event_id) AS events
    FROM merge(currentDatabase(), '^(tasks|obs|actions|rewards|telemetry|transitions|episodes|weights|dead_letters)$')
    WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
    GROUP BY table_name
    UNION ALL
    SELECT 'bad_records', count(), uniqExact(topic, partition, offset)
    FROM bad_records WHERE kafka_timestamp >= @since AND kafka_timestamp < @until AND (@run = '' OR run = @run)
) USING table_name
ORDER BY table_name
