-- Policy staleness over time: how many versions behind the newest published weights the actions' policy was, per time bucket (from action_versions_1s and weights).
-- One row per time bucket: the actions, their mean staleness and the
-- largest; an action's staleness is as in the staleness query.
SELECT
    bucket,
    sum(n) AS actions,
    round(sum(staleness * n) / actions, 2) AS mean_staleness,
    max(staleness) AS max_staleness
FROM
(
    SELECT
        toDateTime(intDiv(toUInt32(second), @bucket) * @bucket, 'UTC') AS bucket,
        -- The action's time goes into the lambda as an array (replicate)
        -- rather than a captured column: 18.16 loses captured columns
        -- after a JOIN.
        greatest(toInt64(arrayReduce('max', arrayFilter((v, p, t) -> p < t, versions, published, replicate(second_ns, versions))))
                 - toInt64(policy_version), 0) AS staleness,
        n
    FROM
    (
        SELECT second, toInt64(toUInt32(second)) * 1000000000 AS second_ns, policy_name, policy_version,
               uniqExactMerge(actions) AS n
        FROM action_versions_1s
        WHERE second >= @since AND second < @until AND (@run = '' OR run = @run)
        GROUP BY second, policy_name, policy_version
    )
    ANY LEFT JOIN
    (
        SELECT policy_name, groupArray(version) AS versions, groupArray(produced_at_ns) AS published
        FROM (SELECT policy_name, version, produced_at_ns FROM weights FINAL WHERE (@run = '' OR run = @run))
        GROUP BY policy_name
    ) USING policy_name
)
GROUP BY bucket
ORDER BY bucket
