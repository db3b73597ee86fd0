-- Distinct events per minute, topic and producer (n) in the window.
SELECT minute, topic, producer, uniqExactMerge(events) AS n
FROM throughput_1m
WHERE minute >= toStartOfMinute(@since) AND minute < @until AND (@run = '' OR run = @run)
GROUP BY minute, topic, producer
