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
            {{action_staleness}}
        )
        GROUP BY staleness
        ORDER BY staleness
    )
)
ARRAY JOIN s AS staleness, a AS actions, c AS cumulative
ORDER BY staleness
