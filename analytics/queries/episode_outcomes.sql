-- Successes against failures per tier, task family and kind (from episode_lengths_by_kind_1m): how many, and how long each kind ran.
-- kind is sample (training), greedy (held-out evaluation) or demo
-- (demonstrations, on their own rows: never the policy's successes).
-- Aborted episodes (infrastructure) are neither; a failure is any other
-- episode without success, those the step budget cut (truncated) also
-- counted apart. A mean length reads 0 when there is no episode of its kind.
SELECT
    tier,
    family,
    kind,
    sumIf(n, success = 1) AS successes,
    sumIf(n, success = 0) AS failures,
    sumIf(n, success = 0 AND truncated = 1) AS truncated_failures,
    if(successes = 0, 0, round(sumIf(length * n, success = 1) / successes, 2)) AS mean_length_successes,
    if(failures = 0, 0, round(sumIf(length * n, success = 0) / failures, 2)) AS mean_length_failures
FROM
(
    SELECT tier, family, kind, success, truncated, aborted, length, uniqExactMerge(episodes) AS n
    FROM episode_lengths_by_kind_1m
    WHERE minute >= toStartOfMinute(@since) AND minute < @until AND (@run = '' OR run = @run)
    GROUP BY tier, family, kind, success, truncated, aborted, length
)
WHERE aborted = 0
GROUP BY tier, family, kind
ORDER BY tier, family, kind
