-- Per-minute throughput by producer (actor, joiner, learner...) and topic (from throughput_1m).
-- events is the total in the window; active_minutes the minutes in which the
-- producer published on the topic; per_minute_avg and per_minute_peak the
-- mean and the highest events per minute over those minutes.
SELECT
    producer,
    topic,
    sum(n) AS events,
    count() AS active_minutes,
    round(events / active_minutes, 1) AS per_minute_avg,
    max(n) AS per_minute_peak
FROM
(
    {{throughput_per_minute}}
)
GROUP BY producer, topic
ORDER BY events DESC, producer, topic
