-- Events per second by topic over time, all producers together (from throughput_1m).
-- One row per time bucket (@bucket seconds, chosen from the window) and
-- topic. Counts are distinct event ids, so re-deliveries never inflate them.
SELECT
    toDateTime(intDiv(toUInt32(minute), @bucket) * @bucket, 'UTC') AS bucket,
    topic,
    sum(n) AS events,
    round(events / @bucket, 2) AS events_per_s
FROM
(
    SELECT minute, topic, producer, uniqExactMerge(events) AS n
    FROM throughput_1m
    WHERE minute >= toStartOfMinute(@since) AND minute < @until AND (@run = '' OR run = @run)
    GROUP BY minute, topic, producer
)
GROUP BY bucket, topic
ORDER BY bucket, topic
