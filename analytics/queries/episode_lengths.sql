-- Episode lengths (steps) by tier and task family: mean, median, 90th percentile and longest, with the success rate (from episode_lengths_1m).
-- Percentiles are exact (quantileExactWeighted over the length histogram).
-- success_pct leaves aborted episodes out, like success_rate.
SELECT
    tier,
    family,
    sum(n) AS episodes,
    round(sum(length * n) / episodes, 2) AS mean_length,
    quantileExactWeighted(0.5)(length, n) AS p50,
    quantileExactWeighted(0.9)(length, n) AS p90,
    max(length) AS max_length,
    sumIf(n, truncated = 1) AS truncated_episodes,
    sumIf(n, aborted = 1) AS aborted_episodes,
    if(episodes = aborted_episodes, 0, round(100 * sumIf(n, success = 1 AND aborted = 0) / (episodes - aborted_episodes), 1)) AS success_pct
FROM
(
    SELECT tier, family, success, truncated, aborted, length, uniqExactMerge(episodes) AS n
    FROM episode_lengths_1m
    WHERE minute >= toStartOfMinute(@since) AND minute < @until
    GROUP BY tier, family, success, truncated, aborted, length
)
GROUP BY tier, family
ORDER BY tier, family
