-- Failure analysis: the rubric facts that failed episodes miss most, per task family and kind (from rewards' facts_met and episodes).
-- A failed episode (no success, not aborted; truncated ones included) misses
-- the facts of its family that its final reward's facts_met lacks. A
-- family's facts are those any of its episodes in the window met by its end
-- (demonstrations included: they meet them all); a fact no episode met
-- cannot be named and is not listed, and MiniWoB++ pages report no facts.
-- failed_episodes counts the family's failed episodes of that kind with a
-- final reward; missing_pct is the share of them missing the fact.
-- Demonstrations' failures are left out (they are not the policy's).
SELECT family, kind, fact, failed_episodes, missing, round(100 * missing / failed_episodes, 1) AS missing_pct
FROM
(
    SELECT family, kind, failed_episodes, fact,
           -- The fact goes into the lambda as an array (replicate) rather
           -- than a captured column: 18.16 loses captured columns after a JOIN.
           arrayCount((m, f) -> NOT has(m, f), mets, replicate(fact, mets)) AS missing
    FROM
    (
        SELECT family, kind, failed_episodes, mets, facts
        FROM
        (
            SELECT family, kind, count() AS failed_episodes, groupArray(met) AS mets
            FROM
            (
                {{policy_failures}}
            )
            ANY INNER JOIN
            (
                {{final_facts_met}}
            ) USING episode_id
            GROUP BY family, kind
        )
        ANY INNER JOIN
        (
            SELECT family, groupUniqArrayArray(met) AS facts
            FROM
            (
                SELECT episode_id, family
                FROM episodes
                WHERE produced_at >= @since AND produced_at < @until AND (@run = '' OR run = @run)
                LIMIT 1 BY episode_id
            )
            ANY INNER JOIN
            (
                {{final_facts_met}}
            ) USING episode_id
            GROUP BY family
        ) USING family
    )
    ARRAY JOIN facts AS fact
)
WHERE missing > 0
ORDER BY family, kind, missing DESC, fact
