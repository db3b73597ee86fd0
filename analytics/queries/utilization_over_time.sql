-- Share of executor time per phase (observe, think, act, wait, idle) over time, all executors together (from utilization_1m).
-- One row per time bucket and phase; the five shares of a bucket add up to
-- 100 (up to rounding). A window counts in the minute it ended.
SELECT bucket, phase, round(100 * us / total, 2) AS pct
FROM
(
    SELECT
        toDateTime(intDiv(toUInt32(minute), @bucket) * @bucket, 'UTC') AS bucket,
        sum(o) AS so, sum(t) AS st, sum(a) AS sa, sum(w) AS sw, sum(i) AS si,
        so + st + sa + sw + si AS total
    FROM
    (
        SELECT minute, event_id,
               maxMerge(observe) AS o, maxMerge(think) AS t, maxMerge(act) AS a,
               maxMerge(wait) AS w, maxMerge(idle) AS i
        FROM utilization_1m
        WHERE minute >= toStartOfMinute(@since) AND minute < @until AND (@run = '' OR run = @run)
        GROUP BY minute, event_id
    )
    GROUP BY bucket
)
ARRAY JOIN
    ['observe', 'think', 'act', 'wait', 'idle'] AS phase,
    [so, st, sa, sw, si] AS us
WHERE total > 0
ORDER BY bucket, phase
