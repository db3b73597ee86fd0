-- Consumer lag over time per group: records behind, summed over partitions (from consumer_lag).
-- Each partition contributes the last snapshot taken in the time bucket.
SELECT bucket, group_id, sum(l) AS lag_records
FROM
(
    SELECT
        toDateTime(intDiv(toUInt32(taken_at), @bucket) * @bucket, 'UTC') AS bucket,
        group_id, topic, partition,
        argMax(lag, taken_at_ns) AS l
    FROM consumer_lag
    WHERE taken_at >= @since AND taken_at < @until AND (@run = '' OR run = @run)
    GROUP BY bucket, group_id, topic, partition
)
GROUP BY bucket, group_id
ORDER BY bucket, group_id
