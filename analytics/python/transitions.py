"""Read AsyncWebRL's transitions (replay) topic from Kafka, in Python.

Each record of the topic is an ``asyncwebrl.v1.Transition`` (schemas/asyncwebrl/v1/events.proto;
the bindings in ``asyncwebrl/v1/events_pb2.py`` are generated from it by schemas/gen.sh).
A transition carries s_t (the observation, with its frame) and a_t whole, and s_t+1 by
reference only (``next_obs_event_id`` and its record's topic, partition and offset): the
next state is the observation of the same episode's transition at step + 1.

``read_batches`` reads every partition from its start with read_committed isolation (the
joiner writes in transactions; aborted ones are never seen) up to the end each partition
had while reading, or forever with ``follow=True``, and yields lists of ``Step``;
``records`` is the consume loop under it (policy_check.py reads the weights topic with it).

Command line (one line per batch; ``--dump`` writes every step as JSON, frames in base64):

    .run/pyenv/bin/python analytics/python/transitions.py \\
        --brokers 127.0.0.1:19092 --topic run-20261201-120000.transitions --batch-size 64
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import logging
import sys
import uuid
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition
from google.protobuf.message import DecodeError
from PIL import Image

from asyncwebrl.v1 import events_pb2

log = logging.getLogger("transitions")


@dataclass
class Step:
    """One transition as a learner would use it."""

    # s_t's frame, RGB, uint8 [height, width, 3]; shape (0, 0, 3) when it has none.
    frame: np.ndarray
    # s_t's interactive elements (events_pb2.Element: bid, role, text, box, state).
    elements: list
    # a_t (events_pb2.Action: type, bid, text, raw, ...).
    action: events_pb2.Action
    reward: float
    # log pi_old(a_t | s_t) of the acting policy (Transition.log_prob_old).
    log_prob: float
    # Weights version that chose a_t; 0 for demonstrations.
    policy_version: int
    episode_id: str = ""
    step: int = 0
    done: bool = False
    # The whole record, for every other field (task, success, next_obs_event_id, ...).
    transition: events_pb2.Transition = field(default_factory=events_pb2.Transition)


# A frame's largest side, as the Go featurizer's (services/policy/frame.go): a
# hostile header must not make the decoder allocate gigabytes.
MAX_FRAME_SIDE = 4096


def decode_frame(obs: events_pb2.Observation) -> np.ndarray:
    """The observation's frame (PNG or JPEG bytes) as RGB uint8 [H, W, 3]."""
    if not obs.frame:
        return np.zeros((0, 0, 3), dtype=np.uint8)
    with Image.open(io.BytesIO(obs.frame)) as img:  # reads the header only
        if max(img.size) > MAX_FRAME_SIDE:
            raise ValueError(f"frame of {img.size[0]}x{img.size[1]}: sides must be at most {MAX_FRAME_SIDE}")
        return np.asarray(img.convert("RGB"), dtype=np.uint8)


def to_step(t: events_pb2.Transition) -> Step:
    """The transition as a Step; raises OSError or ValueError on a bad frame."""
    return Step(
        frame=decode_frame(t.obs),
        elements=list(t.obs.elements),
        action=t.action,
        reward=t.reward,
        log_prob=t.log_prob_old,
        policy_version=t.policy_version,
        episode_id=t.episode_id,
        step=t.step,
        done=t.done,
        transition=t,
    )


@dataclass
class Stats:
    """What a read saw: decoded records and skipped (undecodable) ones."""

    read: int = 0
    skipped: int = 0


def records(
    brokers: str,
    topic: str,
    *,
    follow: bool = False,
    idle_timeout: float = 60.0,
    config: dict | None = None,
) -> Iterator:
    """Yield every record (confluent_kafka.Message) of topic, in offset order within each partition.

    Every partition is read from its start with read_committed isolation (the joiner writes
    in transactions; aborted records are never seen). Without follow the read ends when
    every partition reached its end (its last stable offset when the read got there); with
    follow it waits for new records. No consumer group is joined and no offset committed.
    config adds or overrides librdkafka settings (security, fetch sizes).
    """
    conf = {
        "bootstrap.servers": brokers,
        # librdkafka wants a group id even for assign(); it is never joined.
        "group.id": f"asyncwebrl-py-{uuid.uuid4()}",
        "isolation.level": "read_committed",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
    }
    conf.update(config or {})
    consumer = Consumer(conf)
    try:
        meta = consumer.list_topics(topic, timeout=30).topics.get(topic)
        if meta is None or meta.error is not None or not meta.partitions:
            raise KafkaException(f"unable to read topic {topic}: {meta.error if meta else 'not found'}")
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in meta.partitions])
        open_parts = set(meta.partitions)
        while follow or open_parts:
            msg = consumer.poll(idle_timeout)
            if msg is None:
                if follow:
                    continue
                raise TimeoutError(f"no record or end of partition from {topic} in {idle_timeout}s")
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    open_parts.discard(msg.partition())
                    continue
                raise KafkaException(msg.error())
            yield msg
    finally:
        consumer.close()


def read_batches(
    brokers: str,
    topic: str,
    batch_size: int = 32,
    *,
    follow: bool = False,
    max_records: int | None = None,
    stats: Stats | None = None,
    **kwargs,
) -> Iterator[list[Step]]:
    """Yield lists of at most batch_size Steps decoded from the transitions topic.

    The records come from records() (read_committed, from the start; kwargs go there). An
    undecodable record is logged, counted in stats.skipped and skipped, as the Go learner
    dead-letters it.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    stats = stats if stats is not None else Stats()
    batch: list[Step] = []
    for msg in records(brokers, topic, follow=follow, **kwargs):
        try:
            t = events_pb2.Transition.FromString(msg.value() or b"")
            if not t.HasField("envelope") or not t.HasField("obs") or not t.HasField("action"):
                raise DecodeError("not a transition (no envelope, obs or action)")
            step = to_step(t)
        except (DecodeError, OSError, ValueError) as err:
            # OSError: Pillow's "cannot identify image file".
            stats.skipped += 1
            log.warning("skipping record %s/%d@%d: %s", msg.topic(), msg.partition(), msg.offset(), err)
            continue
        stats.read += 1
        batch.append(step)
        if len(batch) == batch_size:
            yield batch
            batch = []
        if max_records is not None and stats.read >= max_records:
            break
    if batch:
        yield batch


def step_json(s: Step, batch: int) -> dict:
    """A Step as JSON (the --dump format); the frame's bytes in base64, row-major."""
    return {
        "batch": batch,
        "episode_id": s.episode_id,
        "step": s.step,
        "frame_shape": list(s.frame.shape),
        "frame_b64": base64.b64encode(s.frame.tobytes()).decode("ascii"),
        "elements": [e.bid for e in s.elements],
        "action_type": events_pb2.ActionType.Name(s.action.type),
        "action_raw": s.action.raw,
        "reward": s.reward,
        "log_prob": s.log_prob,
        "policy_version": s.policy_version,
        "done": s.done,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--brokers", default="127.0.0.1:19092", help="bootstrap servers (default 127.0.0.1:19092)")
    ap.add_argument("--topic", required=True, help="the transitions topic, with its prefix, e.g. run-X.transitions")
    ap.add_argument("--batch-size", type=int, default=32, help="steps per batch (default 32)")
    ap.add_argument("--max", type=int, default=None, help="stop after this many transitions (default: all)")
    ap.add_argument("--follow", action="store_true", help="keep reading new records (default: stop at the end)")
    ap.add_argument("--dump", help="write every step as one JSON line to this file")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")

    stats = Stats()
    dump = open(args.dump, "w", encoding="utf-8") if args.dump else None
    try:
        for i, batch in enumerate(
            read_batches(args.brokers, args.topic, args.batch_size, follow=args.follow, max_records=args.max, stats=stats)
        ):
            rewards = np.array([s.reward for s in batch], dtype=np.float64)
            versions = [s.policy_version for s in batch]
            shapes = sorted({"x".join(map(str, s.frame.shape[:2])) for s in batch})
            print(
                f"batch {i}: {len(batch)} steps, {len({s.episode_id for s in batch})} episodes, "
                f"mean reward {rewards.mean():.3f}, policy versions {min(versions)}..{max(versions)}, "
                f"frames {','.join(shapes)}",
                flush=True,
            )
            if dump:
                for s in batch:
                    dump.write(json.dumps(step_json(s, i)) + "\n")
    finally:
        if dump:
            dump.close()
    print(f"read {stats.read} transitions ({stats.skipped} undecodable records skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
