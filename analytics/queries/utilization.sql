-- Executor utilization per actor and mode: the share of executor time spent observing, thinking, acting, waiting for the page and idle (from utilization_1m).
-- Shares are of the summed telemetry windows of the actor's executors
-- (each window counted once, by its event id). busy_pct is observe + think
-- + act: the time an executor did work rather than wait or idle.
SELECT
    actor_id,
    mode,
    uniqExact(executor_id) AS executors,
    count() AS windows,
    sum(o) + sum(t) + sum(a) + sum(w) + sum(i) AS total_us,
    if(total_us = 0, 0, round(100 * sum(o) / total_us, 1)) AS observe_pct,
    if(total_us = 0, 0, round(100 * sum(t) / total_us, 1)) AS think_pct,
    if(total_us = 0, 0, round(100 * sum(a) / total_us, 1)) AS act_pct,
    if(total_us = 0, 0, round(100 * sum(w) / total_us, 1)) AS wait_pct,
    if(total_us = 0, 0, round(100 * sum(i) / total_us, 1)) AS idle_pct,
    if(total_us = 0, 0, round(100 * (sum(o) + sum(t) + sum(a)) / total_us, 1)) AS busy_pct,
    sum(s) AS steps
FROM
(
    SELECT actor_id, executor_id, mode, event_id,
           maxMerge(observe) AS o, maxMerge(think) AS t, maxMerge(act) AS a,
           maxMerge(wait) AS w, maxMerge(idle) AS i, maxMerge(steps_done) AS s
    FROM utilization_1m
    WHERE minute >= toStartOfMinute(@since) AND minute < @until AND (@run = '' OR run = @run)
    GROUP BY actor_id, executor_id, mode, event_id
)
GROUP BY actor_id, mode
ORDER BY actor_id, mode
