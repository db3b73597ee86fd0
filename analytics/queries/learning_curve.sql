-- Learning curve: success rate over time by difficulty tier (from success_1m).
-- One row per time bucket and tier; aborted episodes are left out.
SELECT
    toDateTime(intDiv(toUInt32(minute), @bucket) * @bucket, 'UTC') AS bucket,
    tier,
    sum(e) - sum(ab) AS episodes,
    if(episodes = 0, 0, round(100 * sum(s) / episodes, 1)) AS success_pct
FROM
(
    SELECT minute, tier, family, site, split, policy_name, policy_version,
           uniqExactMerge(episodes) AS e, uniqExactIfMerge(successes) AS s, uniqExactIfMerge(aborts) AS ab
    FROM success_1m
    WHERE minute >= toStartOfMinute(@since) AND minute < @until
    GROUP BY minute, tier, family, site, split, policy_name, policy_version
)
GROUP BY bucket, tier
ORDER BY bucket, tier
