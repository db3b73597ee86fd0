-- Consumer lag now: the latest snapshot in the window of every consumer group, topic and partition (from consumer_lag).
-- lag_records is the log end offset minus the group's committed offset
-- (the whole partition when the group never committed).
SELECT
    group_id,
    topic,
    partition,
    argMax(committed_offset, taken_at_ns) AS committed,
    argMax(end_offset, taken_at_ns) AS log_end,
    argMax(lag, taken_at_ns) AS lag_records,
    max(taken_at) AS snapshot_at
FROM consumer_lag
WHERE taken_at >= @since AND taken_at < @until AND (@run = '' OR run = @run)
GROUP BY group_id, topic, partition
ORDER BY group_id, topic, partition
