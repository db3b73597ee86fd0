-- Distribution of policy staleness: how many versions behind the newest published weights each action's policy was (from action_versions_1s and weights).
-- An action at second t by policy P version v has staleness
-- max(version of P published on the weights topic before t) - v, at least 0
-- (0 too when no weights of P were recorded). pct is the share of actions,
-- cumulative_pct the share with that staleness or less.
SELECT
    staleness,
    actions,
    round(100 * actions / total, 2) AS pct,
    round(100 * cumulative / total, 2) AS cumulative_pct
FROM
(
    SELECT
        groupArray(staleness) AS s,
        groupArray(n) AS a,
        arrayCumSum(a) AS c,
        sum(n) AS total
    FROM
    (
        SELECT staleness, sum(n) AS n
        FROM
        (
            SELECT
                -- The action's time goes into the lambda as an array
                -- (replicate) rather than a captured column: 18.16 loses
                -- captured columns after a JOIN.
                greatest(toInt64(arrayReduce('max', arrayFilter((v, p, t) -> p < t, versions, published, replicate(second_ns, versions))))
                         - toInt64(policy_version), 0) AS staleness,
                n
            FROM
            (
                SELECT toInt64(toUInt32(second)) * 1000000000 AS second_ns, policy_name, policy_version,
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
        GROUP BY staleness
        ORDER BY staleness
    )
)
ARRAY JOIN s AS staleness, a AS actions, c AS cumulative
ORDER BY staleness
