-- Stored rows and distinct events per raw table, for events produced in the window.
-- rows counts every stored copy; events counts each event id once (exact,
-- whatever the merges); duplicates = rows - events are re-deliveries that
-- ReplacingMergeTree has not merged away yet. bad_records counts
-- undecodable records by (topic, partition, offset) and uses the Kafka
-- timestamp as its time.
SELECT table_name, rows, events, rows - events AS duplicates
FROM
(
    SELECT 'tasks' AS table_name, count() AS rows, uniqExact(event_id) AS events
    FROM tasks WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
    UNION ALL
    SELECT 'obs', count(), uniqExact(event_id)
    FROM obs WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
    UNION ALL
    SELECT 'actions', count(), uniqExact(event_id)
    FROM actions WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
    UNION ALL
    SELECT 'rewards', count(), uniqExact(event_id)
    FROM rewards WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
    UNION ALL
    SELECT 'telemetry', count(), uniqExact(event_id)
    FROM telemetry WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
    UNION ALL
    SELECT 'transitions', count(), uniqExact(event_id)
    FROM transitions WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
    UNION ALL
    SELECT 'episodes', count(), uniqExact(event_id)
    FROM episodes WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
    UNION ALL
    SELECT 'weights', count(), uniqExact(event_id)
    FROM weights WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
    UNION ALL
    SELECT 'dead_letters', count(), uniqExact(event_id)
    FROM dead_letters WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
    UNION ALL
    SELECT 'bad_records', count(), uniqExact(topic, partition, offset)
    FROM bad_records WHERE kafka_timestamp >= @since AND kafka_timestamp < @until AND (@run = '' OR run = @run)
)
ORDER BY table_name
