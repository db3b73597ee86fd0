-- Success rate by task family, site, split, tier and policy version (from success_1m).
-- An episode counts for the newest policy version that acted in it.
-- Aborted episodes (infrastructure failures) are listed but left out of
-- success_pct = successes / (episodes - aborted).
SELECT
    family,
    site,
    split,
    tier,
    policy_version,
    sum(e) AS episodes,
    sum(s) AS successes,
    sum(ab) AS aborted,
    if(episodes = aborted, 0, round(100 * successes / (episodes - aborted), 1)) AS success_pct
FROM
(
    SELECT minute, tier, family, site, split, policy_name, policy_version,
           uniqExactMerge(episodes) AS e, uniqExactIfMerge(successes) AS s, uniqExactIfMerge(aborts) AS ab
    FROM success_1m
    WHERE minute >= toStartOfMinute(@since) AND minute < @until
    GROUP BY minute, tier, family, site, split, policy_name, policy_version
)
GROUP BY family, site, split, tier, policy_version
ORDER BY family, site, split, tier, policy_version
