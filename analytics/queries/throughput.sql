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
    {{throughput_per_minute}}
)
GROUP BY bucket, topic
ORDER BY bucket, topic
