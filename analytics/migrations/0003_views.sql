-- Materialized views: pre-aggregations fed by every insert into the raw
-- tables, read by the saved queries and the dashboard.
--
-- Duplicates: a raw table can receive the same event twice (a producer
-- retry, or the recorder re-inserting records whose offsets it had not
-- committed when it was killed or when an insert's outcome was unknown). A
-- materialized view sees every inserted block, duplicates included, and
-- never sees the ReplacingMergeTree's later de-duplication. So every view
-- here only holds aggregate states that are idempotent under duplicates:
--   * counts are uniqExact(event_id) states (a second copy of an event adds
--     nothing to the set), never count() or sum();
--   * per-event values (utilization microseconds) are kept per event_id with
--     max() states, and summed at query time after the merge.
-- Counts read from these views are therefore exact before and after merges,
-- whatever the number of re-deliveries.
--
-- Statements end with ';' at the end of a line; {db} is the database.

-- Per-minute throughput by topic and producer (actor, joiner, learner...).
CREATE TABLE IF NOT EXISTS {db}.throughput_1m (
    minute   DateTime('UTC'),
    topic    String,
    producer String,
    events   AggregateFunction(uniqExact, String)
) ENGINE = AggregatingMergeTree() PARTITION BY toYYYYMM(minute) ORDER BY (minute, topic, producer);

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_tasks TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, 'tasks' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.tasks GROUP BY minute, producer;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_obs TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, 'obs' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.obs GROUP BY minute, producer;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_actions TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, 'actions' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.actions GROUP BY minute, producer;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_rewards TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, 'rewards' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.rewards GROUP BY minute, producer;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_telemetry TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, 'telemetry' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.telemetry GROUP BY minute, producer;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_transitions TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, 'transitions' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.transitions GROUP BY minute, producer;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_episodes TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, 'episodes' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.episodes GROUP BY minute, producer;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_weights TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, 'weights' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.weights GROUP BY minute, producer;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.throughput_1m_dead_letters TO {db}.throughput_1m AS
SELECT toStartOfMinute(produced_at) AS minute, 'dlq' AS topic, producer, uniqExactState(event_id) AS events
FROM {db}.dead_letters GROUP BY minute, producer;

-- Executor utilization: one row per telemetry window (keyed by its event
-- id, max states so a duplicate changes nothing), in the minute the window
-- ended, sorted by time for range scans. Shares are summed at query time.
CREATE TABLE IF NOT EXISTS {db}.utilization_1m (
    minute      DateTime('UTC'),
    actor_id    String,
    executor_id String,
    mode        String,
    event_id    String,
    observe     AggregateFunction(max, UInt64),
    think       AggregateFunction(max, UInt64),
    act         AggregateFunction(max, UInt64),
    wait        AggregateFunction(max, UInt64),
    idle        AggregateFunction(max, UInt64),
    steps_done  AggregateFunction(max, UInt32)
) ENGINE = AggregatingMergeTree() PARTITION BY toYYYYMM(minute) ORDER BY (minute, actor_id, executor_id, mode, event_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.utilization_1m_telemetry TO {db}.utilization_1m AS
SELECT toStartOfMinute(window_end) AS minute, actor_id, executor_id, mode, event_id,
       maxState(observe_us) AS observe, maxState(think_us) AS think, maxState(act_us) AS act,
       maxState(wait_us) AS wait, maxState(idle_us) AS idle, maxState(steps) AS steps_done
FROM {db}.telemetry GROUP BY minute, actor_id, executor_id, mode, event_id;

-- Policy versions acting, per second: the input of the staleness
-- distribution. Staleness is relative to the weights timeline, which may be
-- recorded after the actions (replays, a lagging weights partition), so it
-- is resolved at query time against the weights table.
CREATE TABLE IF NOT EXISTS {db}.action_versions_1s (
    second         DateTime('UTC'),
    policy_name    String,
    policy_version UInt64,
    actions        AggregateFunction(uniqExact, String)
) ENGINE = AggregatingMergeTree() PARTITION BY toYYYYMM(second) ORDER BY (second, policy_name, policy_version);

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.action_versions_1s_actions TO {db}.action_versions_1s AS
SELECT produced_at AS second, policy_name, policy_version, uniqExactState(event_id) AS actions
FROM {db}.actions GROUP BY second, policy_name, policy_version;

-- Success by task family, site, tier, split and policy version, per minute.
-- An episode counts for the newest policy version that acted in it.
-- Aborted episodes (infrastructure failures) are counted apart and left out
-- of success rates.
CREATE TABLE IF NOT EXISTS {db}.success_1m (
    minute         DateTime('UTC'),
    tier           Enum8('unspecified' = 0, 'easy' = 1, 'medium' = 2, 'hard' = 3),
    family         String,
    site           String,
    split          Enum8('unspecified' = 0, 'train' = 1, 'test' = 2),
    policy_name    String,
    policy_version UInt64,
    episodes       AggregateFunction(uniqExact, String),
    successes      AggregateFunction(uniqExactIf, String, UInt8),
    aborts         AggregateFunction(uniqExactIf, String, UInt8)
) ENGINE = AggregatingMergeTree() PARTITION BY toYYYYMM(minute) ORDER BY (minute, tier, family, site, split, policy_name, policy_version);

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.success_1m_episodes TO {db}.success_1m AS
SELECT toStartOfMinute(produced_at) AS minute, tier, family, site, split, policy_name,
       arrayReduce('max', policy_versions_used) AS policy_version,
       uniqExactState(event_id) AS episodes,
       uniqExactIfState(event_id, success AND NOT aborted) AS successes,
       uniqExactIfState(event_id, aborted) AS aborts
FROM {db}.episodes GROUP BY minute, tier, family, site, split, policy_name, policy_version;

-- Episode lengths (steps) by tier, family and outcome, per minute.
CREATE TABLE IF NOT EXISTS {db}.episode_lengths_1m (
    minute    DateTime('UTC'),
    tier      Enum8('unspecified' = 0, 'easy' = 1, 'medium' = 2, 'hard' = 3),
    family    String,
    success   UInt8,
    truncated UInt8,
    aborted   UInt8,
    length    UInt32,
    episodes  AggregateFunction(uniqExact, String)
) ENGINE = AggregatingMergeTree() PARTITION BY toYYYYMM(minute) ORDER BY (minute, tier, family, success, truncated, aborted, length);

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.episode_lengths_1m_episodes TO {db}.episode_lengths_1m AS
SELECT toStartOfMinute(produced_at) AS minute, tier, family, success, truncated, aborted, length,
       uniqExactState(event_id) AS episodes
FROM {db}.episodes GROUP BY minute, tier, family, success, truncated, aborted, length;
